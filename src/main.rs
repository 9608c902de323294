fn main() -> std::process::ExitCode {
    match lanser::run() {
        Ok(status) => status.into(),
        Err(e) => lanser::report(&e).into(),
    }
}
