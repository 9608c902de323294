//! MCP prompts: the workflows agents repeat, each a short sequence of lanser tool calls with
//! their arguments filled in from the prompt's own (rename safely, edit with verification,
//! what changed since my last call and what it breaks, which tests to run). A host shows them
//! as slash commands; the text it gets back tells the model which tools to call, in order,
//! and what to look at in each answer.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use std::collections::HashMap;

/// One workflow: its name, what it is for, its arguments (name, description, required), and
/// how its steps are written from the arguments.
struct Workflow {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
    steps: fn(&HashMap<String, String>) -> String,
}

const WORKFLOWS: &[Workflow] = &[
    Workflow {
        name: "rename_safely",
        title: "Rename safely",
        description: "Rename a symbol everywhere it is used: check it can be renamed, see every \
                      reference, preview the rename, apply it, and confirm no new diagnostics.",
        arguments: &[
            (
                "selector",
                "Where the symbol is (`file.py@L12:name`, `py://pkg.mod#Name`)",
                true,
            ),
            ("new_name", "The new identifier", true),
        ],
        steps: rename_safely,
    },
    Workflow {
        name: "edit_with_verification",
        title: "Edit with verification",
        description: "Replace a definition's body, checked before it is written: read the \
                      current code, preview the edit with the diagnostics it would add, write it \
                      only if it adds no error, then find the tests that reach it.",
        arguments: &[
            (
                "selector",
                "The definition to edit (`file.py@L12:name`, `py://pkg.mod#Name`)",
                true,
            ),
            (
                "text",
                "The new body (optional: without it, only the first step is filled in)",
                false,
            ),
        ],
        steps: edit_with_verification,
    },
    Workflow {
        name: "what_changed",
        title: "What changed, and what it breaks",
        description: "List what changed symbol by symbol since a git revision (default HEAD, so \
                      the uncommitted work), then what each change can affect and which tests \
                      reach it.",
        arguments: &[("since", "A git revision (default HEAD)", false)],
        steps: what_changed,
    },
    Workflow {
        name: "tests_to_run",
        title: "Which tests to run",
        description: "Find the pytest tests that reach a definition (or a patch), and run them.",
        arguments: &[
            ("selector", "The definition whose tests to find", false),
            ("patch", "A unified diff instead of a selector", false),
        ],
        steps: tests_to_run,
    },
];

/// Every prompt, as `prompts/list` shows it.
pub fn list() -> Vec<Prompt> {
    WORKFLOWS
        .iter()
        .map(|w| {
            let args = w
                .arguments
                .iter()
                .map(|(name, description, required)| {
                    let mut a = PromptArgument::new(*name);
                    a.description = Some((*description).to_string());
                    a.required = Some(*required);
                    a
                })
                .collect();
            Prompt::new(w.name, Some(w.description), Some(args)).with_title(w.title)
        })
        .collect()
}

/// The argument names of prompt `name` (none for an unknown prompt).
pub fn argument_names(name: &str) -> Vec<&'static str> {
    WORKFLOWS
        .iter()
        .find(|w| w.name == name)
        .map(|w| w.arguments.iter().map(|a| a.0).collect())
        .unwrap_or_default()
}

/// Prompt `name` with `arguments`, or why not (an unknown prompt, a missing argument).
pub fn get(name: &str, arguments: &HashMap<String, String>) -> Result<GetPromptResult, String> {
    let w = WORKFLOWS
        .iter()
        .find(|w| w.name == name)
        .ok_or_else(|| format!("unknown prompt {name:?}"))?;
    for (arg, _, required) in w.arguments {
        if *required && arguments.get(*arg).is_none_or(|v| v.trim().is_empty()) {
            return Err(format!("prompt {name:?} needs the argument {arg:?}"));
        }
    }
    let text = (w.steps)(arguments);
    let mut r = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    r.description = Some(w.description.to_string());
    Ok(r)
}

/// A JSON string literal of `s` (for arguments written into a call).
fn q(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn arg<'a>(a: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    a.get(name)
        .map(String::as_str)
        .filter(|v| !v.trim().is_empty())
}

fn rename_safely(a: &HashMap<String, String>) -> String {
    let sel = q(arg(a, "selector").unwrap_or_default());
    let new = q(arg(a, "new_name").unwrap_or_default());
    format!(
        "Rename the symbol at {sel} to {new} with the lanser tools, in this order:\n\
         1. `prepare_rename` {{\"selector\": {sel}}}: stop if it cannot be renamed there.\n\
         2. `refs` {{\"selector\": {sel}}}: note how many references and in which files.\n\
         3. `rename` {{\"selector\": {sel}, \"new_name\": {new}}}: a preview. Read its diff; every \
         reference of step 2 should change, nothing else.\n\
         4. `rename` {{\"selector\": {sel}, \"new_name\": {new}, \"apply\": true}}: write it.\n\
         5. `diag` {{\"targets\": <the files the rename touched>}}: there should be no new error.\n\
         Report the files changed and any diagnostic that appeared."
    )
}

fn edit_with_verification(a: &HashMap<String, String>) -> String {
    let sel = q(arg(a, "selector").unwrap_or_default());
    let text = arg(a, "text").map_or_else(|| "\"<the new body>\"".to_string(), q);
    format!(
        "Edit the definition at {sel}, verified before it is written, with the lanser tools:\n\
         1. `source` {{\"selector\": {sel}}}: read the current code.\n\
         2. `edit` {{\"selector\": {sel}, \"replace_body\": true, \"text\": {text}}}: a \
         preview. Read its diff and the diagnostics it would add.\n\
         3. If it adds no error: `edit` with the same arguments and \"apply\": true, \
         \"require_clean\": true (refused, nothing written, if it would add an error).\n\
         4. `tests` {{\"selector\": {sel}}}: the tests that reach it; run them with \
         \"run\": true.\n\
         Report what was written and the tests' outcome."
    )
}

fn what_changed(a: &HashMap<String, String>) -> String {
    let since = q(arg(a, "since").unwrap_or("HEAD"));
    format!(
        "Find what changed since {since} and what it can break, with the lanser tools:\n\
         1. `changes` {{\"since\": {since}}}: the definitions added, removed, moved and changed.\n\
         2. For each changed or removed definition, `impact` {{\"selector\": <its selector \
         from step 1>}}: its callers and references, and the tests that reach them.\n\
         3. `diag` {{\"targets\": <the changed files>}}.\n\
         Report each change with what it affects, and the tests to run."
    )
}

fn tests_to_run(a: &HashMap<String, String>) -> String {
    let target = match (arg(a, "selector"), arg(a, "patch")) {
        (Some(s), _) => format!("\"selector\": {}", q(s)),
        (None, Some(p)) => format!("\"patch\": {}", q(p)),
        (None, None) => "\"patch\": <the diff of your change, as `git diff` prints it>".into(),
    };
    format!(
        "Find and run the tests for a change with the lanser tools:\n\
         1. `tests` {{{target}}}: the pytest tests that reach it, with why each was chosen.\n\
         2. `tests` {{{target}, \"run\": true}}: run them and read each outcome.\n\
         Report the failures, if any, with the test names."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every prompt lists a description and its arguments; a prompt's text names the tools
    /// with the caller's arguments, quoted as JSON; a missing required argument is refused.
    #[test]
    fn prompts_fill_their_steps_from_their_arguments() {
        let listed = list();
        assert_eq!(listed.len(), WORKFLOWS.len());
        assert!(listed.iter().all(|p| p.description.is_some()));
        let args = HashMap::from([
            ("selector".to_string(), "a.py@L3:f".to_string()),
            ("new_name".to_string(), "g\"x".to_string()),
        ]);
        let r = get("rename_safely", &args).unwrap();
        let text = serde_json::to_string(&r.messages).unwrap();
        assert!(text.contains(r#"\"new_name\": \"g\\\"x\""#), "{text}");
        assert!(text.contains("prepare_rename"), "{text}");
        let err = get("rename_safely", &HashMap::new()).unwrap_err();
        assert!(err.contains("selector"), "{err}");
        assert!(get("nope", &args).is_err());
        assert_eq!(argument_names("tests_to_run"), vec!["selector", "patch"]);
    }

    /// Each step names a tool by the name `tools/list` gives it (`` `refs` {…} ``).
    #[test]
    fn every_step_names_a_listed_tool() {
        let tools: Vec<String> = crate::mcp::tools::all()
            .into_iter()
            .map(|t| t.name)
            .collect();
        let args = HashMap::from([
            ("selector".to_string(), "a.py@L3:f".to_string()),
            ("new_name".to_string(), "g".to_string()),
            ("text".to_string(), "pass".to_string()),
            ("since".to_string(), "HEAD~1".to_string()),
        ]);
        let mut named = 0;
        for w in WORKFLOWS {
            let text = serde_json::to_string(&get(w.name, &args).unwrap().messages).unwrap();
            for step in text.split('`').skip(1).step_by(2) {
                if step.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    assert!(tools.iter().any(|t| t == step), "{}: `{step}`", w.name);
                    named += 1;
                }
            }
        }
        assert!(named >= 10, "only {named} tool names in the prompts");
    }
}
