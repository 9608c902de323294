//! `lanser mcp`: every lanser fact as an MCP tool, over stdio (or streamable HTTP, `http`),
//! on `rmcp` (the official Rust SDK). A call becomes a `lanser batch` request line and is
//! answered as the CLI answers it (through the workspace's warm daemon, or in this process
//! for writes), so its `structuredContent` is the bundle `lanser <cmd> --json` prints — same
//! bytes, same `bundleId` — and its text the human rendering, paged. An error bundle is an
//! `isError` result with the one-line message; nothing a client sends stops the server.
//!
//! The `batch` tool ([`batch`]) answers many request lines in one call, one bundle each.
//!
//! Long waits are visible: with a `progressToken`, a call reports every second what it is
//! waiting for (the daemon starting, Pyright installing or loading the project). A cancelled
//! call returns at once; the answer the daemon was computing is dropped.

mod answer;
mod args;
mod batch;
mod complete;
mod generic;
mod http;
pub mod install;
mod logging;
mod output;
mod prompts;
mod resources;
mod tools;

use crate::bundle::{Bundle, Status};
use crate::error::{LanserError, Result};
use crate::workspace::Workspace;
use answer::Answerer;
#[allow(deprecated)] // MCP logging: see the note in `logging`.
use rmcp::model::LoggingLevel;
#[allow(deprecated)] // MCP logging: see the note in `logging`.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, Reference,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The MCP server of one workspace.
#[derive(Clone)]
pub struct Server {
    answerer: Arc<Answerer>,
    tools: Arc<Vec<tools::Spec>>,
    listed: Arc<Vec<Tool>>,
    /// This session's log level (each HTTP session gets its own: [`Server::session`]).
    log: logging::Log,
}

impl Server {
    pub fn new(answerer: Answerer) -> Server {
        let specs = tools::all();
        let output = Arc::new(
            crate::schema::schema(crate::schema::Kind::Bundle)
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let mut listed: Vec<Tool> = specs
            .iter()
            .map(|s| {
                let input = s.schema.as_object().cloned().unwrap_or_default();
                let mut t = Tool::new(s.name.clone(), s.description.clone(), Arc::new(input));
                t.title = Some(s.title.clone());
                t.output_schema = Some(Arc::new(output::for_cmd(&output, &s.cmd)));
                t.annotations = Some(
                    ToolAnnotations::with_title(s.title.clone())
                        .read_only(s.read_only)
                        .destructive(s.destructive)
                        .idempotent(s.idempotent)
                        .open_world(false),
                );
                t
            })
            .collect();
        listed.push(batch::tool(&output));
        Server {
            answerer: Arc::new(answerer),
            tools: Arc::new(specs),
            listed: Arc::new(listed),
            log: logging::Log::default(),
        }
    }

    /// The server for a new session: the same tools and answerer, its own log level.
    pub fn session(&self) -> Server {
        Server {
            log: logging::Log::default(),
            ..self.clone()
        }
    }

    /// Answer one call: the bundle, or a result saying why the arguments are not a request.
    #[allow(deprecated)] // MCP logging levels
    async fn run(
        &self,
        params: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        if params.name == batch::NAME {
            let arguments = params.arguments.map(Value::Object).unwrap_or(Value::Null);
            return batch::run(&self.answerer, arguments, cx, &self.log).await;
        }
        let name = tools::canonical(&params.name);
        let Some(spec) = self.tools.iter().find(|s| s.name == name) else {
            return failure(&format!("unknown tool {:?}", params.name.as_ref()));
        };
        let arguments = params.arguments.map(Value::Object).unwrap_or(Value::Null);
        let call = match spec.call(arguments, &self.answerer.ws.root) {
            Ok(c) => c,
            Err(why) => return failure(&format!("E/USAGE: {}: {why}", spec.name)),
        };
        let started = Instant::now();
        let answer = self.answerer.answer(&call);
        // A call that only reads stops at once when cancelled (the daemon drops it and cancels
        // it at the server); a write finishes, so that no apply is cut in half.
        let cancel = async {
            match spec.read_only {
                true => cx.ct.cancelled().await,
                false => std::future::pending().await,
            }
        };
        let jcs = tokio::select! {
            r = answer => r,
            _ = cancel => return failure("cancelled"),
            _ = progress(cx, &self.answerer.ws, &self.log) => unreachable!("progress reports until the answer"),
        };
        let jcs = match jcs {
            Ok(jcs) => jcs,
            Err(e) => {
                let message = format!("{}: {}", spec.name, e.one_line());
                self.log.send(&cx.peer, LoggingLevel::Error, message).await;
                return failure(&e.one_line());
            }
        };
        if let Ok(v) = serde_json::from_str::<Value>(&jcs) {
            if let Some((level, message)) = logging::of_bundle(&spec.name, &v) {
                self.log.send(&cx.peer, level, message).await;
            }
        }
        let ms = started.elapsed().as_millis();
        let message = format!("{}: answered in {ms} ms", spec.name);
        self.log.send(&cx.peer, LoggingLevel::Debug, message).await;
        result_of(&jcs, &self.answerer.ws, call.offset, call.limit)
    }
}

/// A result for a call that never became a bundle.
fn failure(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

/// The bundle as a result: structured content, the text a model reads, `isError` for errors.
fn result_of(jcs: &str, ws: &Workspace, offset: usize, limit: usize) -> CallToolResult {
    let (Ok(value), Ok(bundle)) = (
        serde_json::from_str::<Value>(jcs),
        serde_json::from_str::<Bundle>(jcs),
    ) else {
        return failure("E/INTERNAL: the bundle did not parse");
    };
    let text = answer::text_of(&bundle, ws, offset, limit);
    let mut r = match bundle.status {
        Status::Ok => CallToolResult::structured(value),
        Status::Error => CallToolResult::structured_error(value),
    };
    r.content = vec![ContentBlock::text(text)];
    r
}

/// What the call is waiting for, until dropped: as an info log message when the call starts
/// on a daemon that is not up yet or a server still installing, and each time that changes;
/// with a progress token, as progress at once in that case, and every second.
#[allow(deprecated)] // MCP logging levels
async fn progress(cx: &RequestContext<RoleServer>, ws: &Workspace, log: &logging::Log) {
    let token = cx.meta.get_progress_token();
    let started = Instant::now();
    let paths = crate::daemon::Paths::for_root(&ws.root);
    // A warm daemon with its server installed: nothing to say as the call starts.
    let mut last = Some((true, true));
    let mut tick = 0.0;
    loop {
        let secs = started.elapsed().as_secs();
        let pyright = &crate::config::Config::builtin().servers[crate::servers::DEFAULT_SERVER];
        let installed = crate::servers::installed(pyright, &crate::servers::install_dir(pyright));
        let live = paths.live_pid().is_some();
        let message = match (live, installed) {
            (_, false) => format!(
                "installing pyright {} ({secs} s)",
                crate::servers::PYRIGHT_VERSION
            ),
            (false, true) => format!("starting the lanser daemon for this workspace ({secs} s)"),
            (true, true) => format!(
                "the language server is loading the project ({} source files; {secs} s)",
                ws.index().sources().len()
            ),
        };
        if last.replace((live, installed)) != Some((live, installed)) {
            log.send(&cx.peer, LoggingLevel::Info, message.clone())
                .await;
        }
        // As the call starts, progress only where it will wait (no daemon yet, a server to
        // install); then every second.
        let waits = tick > 0.0 || (live, installed) != (true, true);
        if let Some(token) = token.as_ref().filter(|_| waits) {
            let mut p = ProgressNotificationParam::new(token.clone(), tick);
            p.message = Some(message);
            if cx.peer.notify_progress(p).await.is_err() {
                return std::future::pending().await;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        tick += 1.0;
    }
}

// MCP logging is deprecated in rmcp (see the note in `logging`); lanser serves it.
#[allow(deprecated)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::from_build_env();
        info.name = "lanser".into();
        info.title = Some("lanser: language-server facts as Analysis Bundles".into());
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(info)
            .with_instructions(
                "Facts from pinned language servers about this workspace (Pyright for \
                 Python; each other language's own server): definitions, references, types, \
                 diagnostics, renames. Every answer is an Analysis Bundle (JSON, in \
                 structuredContent) computed on the files as they are on disk now; positions \
                 are lanser selectors (see each tool). Writes happen only with apply: true.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.listed.as_ref().clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let name = tools::canonical(name);
        self.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        Ok(self.run(request, &cx).await.into())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<(), ErrorData> {
        self.log.set(request.level);
        Ok(())
    }

    /// A prompt's `selector`/`file` argument, or the outline template's `path`, completes to
    /// what names code in this workspace; any other argument to nothing.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<CompleteResult, ErrorData> {
        let arg = &request.argument;
        let known = match &request.r#ref {
            Reference::Prompt(p) => prompts::argument_names(&p.name).contains(&arg.name.as_str()),
            Reference::Resource(r) => r.uri.starts_with(resources::OUTLINE) && arg.name == "path",
            _ => false,
        };
        let info = match known {
            true => complete::complete(&self.answerer.ws, &arg.name, &arg.value),
            false => Default::default(),
        };
        Ok(CompleteResult::new(info))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<GetPromptResponse, ErrorData> {
        let arguments = request
            .arguments
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.as_str()?.to_string())))
            .collect();
        prompts::get(&request.name, &arguments)
            .map(Into::into)
            .map_err(|e| ErrorData::invalid_params(e, None))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(Vec::new()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.answerer, &request.uri)
            .await
            .map(Into::into)
            .map_err(|e| ErrorData::resource_not_found(e, None))
    }
}

/// `lanser mcp`: serve the workspace on stdin/stdout until the client closes, or with
/// `--http` over streamable HTTP until interrupted.
pub async fn serve(global: &crate::cli::Global, args: &crate::cli::McpArgs) -> Result<()> {
    let bind = match &args.http {
        Some(spec) => {
            let token = args
                .token
                .clone()
                .or_else(|| std::env::var("LANSER_MCP_TOKEN").ok());
            Some(http::Bind::parse(spec, token)?)
        }
        None => None,
    };
    let opts = global.options()?;
    let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
    // A failed recovery is met again, and reported, by the call that needs the files.
    let _ = crate::edits::apply::recover_and_report(&ws.root);
    // The options every call runs under unless it sets its own: the server's, parsed once
    // with its command line (`mcp`'s own options are not among them).
    let answerer = Answerer::new(
        ws,
        opts.cwd.clone(),
        global.clone(),
        !crate::daemon::disabled(global),
    );
    let server = Server::new(answerer);
    match bind {
        Some(bind) => http::serve(server.clone(), bind).await?,
        None => {
            let running = server
                .clone()
                .serve(rmcp::transport::stdio())
                .await
                .map_err(|e| LanserError::internal("mcp: cannot serve on stdio").with_source(e))?;
            let _ = running.waiting().await;
        }
    }
    server.answerer.close().await;
    Ok(())
}

#[cfg(test)]
mod tests;
