//! Where a batch's request lines come from (`--in`: a file, or stdin read as it arrives) and
//! where its bundles go (`--out`), one JCS line each, in input order.

use crate::bundle::Bundle;
use crate::error::{LanserError, Result};
use crate::selector::{PositionSpec, SegmentKind};
use std::collections::VecDeque;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The modules the `py://` and `ast://` selectors of an input file name, each once, in line
/// order; none for anything but a regular file (a FIFO read ahead would lose its lines).
/// Lines longer than a request line could sensibly be are not read here (the batch refuses
/// them).
pub fn py_modules(input: &std::path::Path) -> Vec<String> {
    use std::io::BufRead;
    const LONGEST: usize = 1 << 16;
    let Ok(file) = std::fs::File::open(input) else {
        return Vec::new();
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Vec::new();
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).lines().map_while(|l| l.ok()) {
        if line.len() > LONGEST {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        // The module as the resolver asks for it (the selector parser's, not a text split).
        let module = match v["selector"].as_str().map(crate::selector::parse) {
            Some(Ok(PositionSpec::Symbol { module, .. })) => module,
            Some(Ok(PositionSpec::Ast { path, .. })) => match path.into_iter().next() {
                Some(first) if first.0 == SegmentKind::Module => first.1,
                _ => continue,
            },
            _ => continue,
        };
        if seen.insert(module.clone()) {
            out.push(module);
        }
    }
    out
}

/// Where request lines come from.
pub enum Source {
    Reader(tokio::io::Lines<Box<dyn AsyncBufRead + Unpin + Send>>),
    File(std::io::Lines<std::io::BufReader<std::fs::File>>),
    List(VecDeque<String>),
}

impl Source {
    /// Whether reading the next line may wait on a writer (stdin, a pipe).
    pub(super) fn streams(&self) -> bool {
        matches!(self, Source::Reader(_))
    }

    /// `--in`: a file, or `-` for stdin (read as it arrives).
    pub fn open(input: &str) -> Result<Source> {
        if input == "-" {
            let stdin: Box<dyn AsyncBufRead + Unpin + Send> =
                Box::new(tokio::io::BufReader::new(tokio::io::stdin()));
            return Ok(Source::Reader(stdin.lines()));
        }
        let file = std::fs::File::open(input).map_err(|e| {
            LanserError::not_found(format!("cannot read requests {input}")).with_source(e)
        })?;
        // A regular file: blocking reads are short.
        Ok(Source::File(std::io::BufRead::lines(
            std::io::BufReader::new(file),
        )))
    }

    /// The next line; cancel-safe (a line is never half read).
    pub async fn next(&mut self) -> Result<Option<String>> {
        match self {
            Source::Reader(lines) => lines
                .next_line()
                .await
                .map_err(|e| LanserError::internal("cannot read requests").with_source(e)),
            Source::File(lines) => lines
                .next()
                .transpose()
                .map_err(|e| LanserError::internal("cannot read requests").with_source(e)),
            Source::List(items) => Ok(items.pop_front()),
        }
    }
}

/// `--out` (a file, or `-` for stdout) and the tally of failed lines for the summary.
pub struct Output {
    writer: Box<dyn std::io::Write>,
    out: String,
    failed: usize,
    first: Option<String>,
}

impl Output {
    pub fn open(out: &str) -> Result<Output> {
        let writer: Box<dyn std::io::Write> = if out == "-" {
            Box::new(std::io::stdout())
        } else {
            let file = std::fs::File::create(out).map_err(|e| {
                LanserError::new(
                    crate::error::ErrorCode::FsPermissions,
                    format!("cannot write bundles to {out}"),
                )
                .with_source(e)
            })?;
            Box::new(std::io::BufWriter::new(file))
        };
        Ok(Output {
            writer,
            out: out.to_string(),
            failed: 0,
            first: None,
        })
    }

    /// Write line `line`'s bundle (`jcs`, the JCS of `bundle`) and flush it.
    pub fn write(&mut self, line: usize, jcs: &str, bundle: &Bundle) -> Result<()> {
        self.writer
            .write_all(jcs.as_bytes())
            .and_then(|_| self.writer.write_all(b"\n"))
            .and_then(|_| self.writer.flush())
            .map_err(|e| {
                LanserError::internal(format!("cannot write bundles to {}", self.out))
                    .with_source(e)
            })?;
        if let Some(e) = &bundle.error {
            self.failed += 1;
            self.first
                .get_or_insert_with(|| format!("line {line}: {}", e.one_line()));
        }
        Ok(())
    }

    /// `lanser: N request(s) failed; first at line …` on stderr, when one did.
    pub fn report(&self) {
        if let Some(first) = &self.first {
            eprintln!(
                "lanser: {} request(s) failed; first at {first}",
                self.failed
            );
        }
    }
}
