fn main() -> std::process::ExitCode {
    lanser::run()
}
