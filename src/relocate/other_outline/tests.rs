use super::*;
use crate::relocate::grammars;

fn defs(path: &str, src: &str) -> Vec<Def> {
    let g = Grammar::for_path(path).unwrap();
    definitions(g, &grammars::parse(g, src).unwrap(), src)
}

/// `qualname kind` per definition, in document order.
fn listing(ds: &[Def]) -> Vec<String> {
    ds.iter()
        .map(|d| {
            let chain: Vec<&str> = d.chain.iter().map(|k| k.as_str()).collect();
            format!("{} {}", d.qualname(), chain.join("/"))
        })
        .collect()
}

fn role<'a>(src: &'a str, ds: &[Def], q: &str, pick: impl Fn(&Def) -> Option<Span>) -> &'a str {
    let d = ds.iter().find(|d| d.qualname() == q).unwrap();
    let (s, e) = pick(d).unwrap();
    &src[s..e]
}

#[test]
fn typescript_classes_members_functions_and_arrow_constants() {
    let src = "\
/** Greets. */
export class Greeter<T> extends Base {
  private name: string = \"x\";
  constructor(name: string) { super(); }
  greet(a: number, b?: string): string { return a; }
  get size(): number { return 1; }
  set size(v: number) {}
}
export interface Shape { area(): number; label: string; }
export enum Color { Red, Green = 2 }
export type Id = string;
export function add(a: number, b: number): number;
export function add(a: any, b: any): any { function inner() {} const local = 1; return a + b; }
export const mul = (a: number, b: number) => a * b;
let counter = 0, other = 1;
namespace NS { export function f() {} }
";
    let ds = defs("web/a.ts", src);
    assert_eq!(
        listing(&ds),
        [
            "Greeter class",
            "Greeter.name class/assign",
            "Greeter.constructor class/def",
            "Greeter.greet class/def",
            "Greeter.size class/def",
            "Shape class",
            "Shape.area class/def",
            "Shape.label class/assign",
            "Color class",
            "Color.Red class/assign",
            "Color.Green class/assign",
            "Id class",
            "add def",
            "add.inner def/def",
            "mul def",
            "counter assign",
            "other assign",
            "NS class",
            "NS.f class/def",
        ]
    );
    assert_eq!(role(src, &ds, "Greeter", |d| d.doc), "/** Greets. */");
    assert_eq!(
        role(src, &ds, "Greeter.greet", |d| Some(d.sig)),
        "greet(a: number, b?: string): string"
    );
    assert_eq!(role(src, &ds, "Greeter.size", |d| d.body), "{ return 1; }");
    assert_eq!(role(src, &ds, "mul", |d| d.body), "a * b");
    assert_eq!(
        role(src, &ds, "Greeter", |d| Some(d.node)).lines().count(),
        7
    );
    let add = ds.iter().find(|d| d.qualname() == "add").unwrap();
    assert_eq!(add.shape, "fn(a:any,b:any)");
}

#[test]
fn go_methods_are_named_under_their_receiver_type() {
    let src = "\
package store

// Counter counts.
type Counter struct {
\tn, m int
\tName string
}

type Shape interface { Area() float64 }

const Max = 3
var a, b = 1, 2

// Add adds.
func (c *Counter) Add(d int) int { return c.n + d }
func (c Box[T]) Get() int { return 0 }
func New() *Counter { return &Counter{} }
";
    let ds = defs("store/store.go", src);
    assert_eq!(
        listing(&ds),
        [
            "Counter class",
            "Counter.n class/assign",
            "Counter.m class/assign",
            "Counter.Name class/assign",
            "Shape class",
            "Shape.Area class/def",
            "Max assign",
            "a assign",
            "b assign",
            "Counter.Add class/def",
            "Box.Get class/def",
            "New def",
        ]
    );
    assert_eq!(role(src, &ds, "Counter", |d| d.doc), "// Counter counts.");
    assert_eq!(role(src, &ds, "Counter.Add", |d| d.doc), "// Add adds.");
    assert_eq!(
        role(src, &ds, "Counter.Add", |d| Some(d.sig)),
        "func (c *Counter) Add(d int) int"
    );
}

#[test]
fn rust_impl_members_go_under_the_type_and_doc_comments_are_kept() {
    let src = "\
/// A counter.
/// Two lines.
#[derive(Default)]
pub struct Counter { n: u32 }
pub enum E { A, B(u8) }
pub trait Shape { fn area(&self) -> f64; }
impl Counter { pub fn add(&mut self, d: u32) -> u32 { fn helper() {} self.n + d } }
impl<T> Shape for Wrap<T> { fn area(&self) -> f64 { 0.0 } }
mod inner { pub fn f() {} }
const MAX: u32 = 3;
macro_rules! m { () => {} }
";
    let ds = defs("src/lib.rs", src);
    assert_eq!(
        listing(&ds),
        [
            "Counter class",
            "Counter.n class/assign",
            "E class",
            "E.A class/assign",
            "E.B class/assign",
            "Shape class",
            "Shape.area class/def",
            "Counter.add class/def",
            "Counter.add.helper class/def/def",
            "Wrap.area class/def",
            "inner class",
            "inner.f class/def",
            "MAX assign",
            "m def",
        ]
    );
    assert_eq!(
        role(src, &ds, "Counter", |d| d.doc),
        "/// A counter.\n/// Two lines.\n"
    );
}

#[test]
fn c_and_cpp_keep_definitions_over_prototypes() {
    let src = "\
#ifndef A_H
#define A_H
/* A point. */
struct point { int x, y; };
typedef struct { int n; } counter;
int add(int a, int b);
static const char *name = \"x\";
int add(int a, int b) { return a + b; }
static struct point *mk(void) { return 0; }
enum color { RED, GREEN };
#endif
";
    let ds = defs("a.c", src);
    assert_eq!(
        listing(&ds),
        [
            "A_H assign",
            "point class",
            "point.x class/assign",
            "point.y class/assign",
            "counter class",
            "counter.n class/assign",
            "name assign",
            "add def",
            "mk def",
            "color class",
            "color.RED class/assign",
            "color.GREEN class/assign",
        ]
    );
    assert_eq!(role(src, &ds, "add", |d| d.body), "{ return a + b; }");
    assert_eq!(role(src, &ds, "point", |d| d.doc), "/* A point. */");
    let cpp = "\
namespace geo {
class Shape {
 public:
  virtual double area() const = 0;
  int n;
};
double Shape::area() const { return 0; }
}
template <typename T> T id(T x) { return x; }
";
    let ds = defs("geo.cpp", cpp);
    assert_eq!(
        listing(&ds),
        [
            "geo class",
            "geo.Shape class/class",
            "geo.Shape.n class/class/assign",
            "geo.Shape.area class/class/def",
            "id def",
        ]
    );
    assert_eq!(role(cpp, &ds, "id", |d| Some(d.node)).lines().count(), 1);
}

#[test]
fn shell_functions_and_top_level_variables() {
    let src = "\
#!/bin/bash
# Greets.
greet() { echo \"hi $1\"; }
function total {
  local x=1
  inner() { :; }
}
NAME=world
export LEVEL=2
";
    let ds = defs("run.sh", src);
    assert_eq!(
        listing(&ds),
        [
            "greet def",
            "total def",
            "total.inner def/def",
            "NAME assign",
            "LEVEL assign",
        ]
    );
    assert_eq!(role(src, &ds, "greet", |d| d.doc), "# Greets.");
}

#[test]
fn deep_nesting_is_cut_off_not_a_stack_overflow() {
    let depth = 20_000;
    let src = format!(
        "function f() {{}}\nconst x = {};\n",
        "[".repeat(depth) + &"]".repeat(depth)
    );
    let ds = defs("deep.js", &src);
    assert_eq!(listing(&ds), ["f def", "x assign"]);
    let nested = "function g() { ".repeat(1000) + &"}".repeat(1000);
    let ds = defs("nested.js", &nested);
    assert!(!ds.is_empty() && ds.len() <= MAX_DEPTH + 1);
}

#[test]
fn php_definitions_are_named_under_their_namespace() {
    let src = "\
<?php
namespace App\\Billing;

/** Max. */
const MAX = 10, MIN = 1;

final class Invoice implements Payable {
    public const CURRENCY = 'EUR';
    private array $lines = [], $notes;
    /** Adds. */
    public function addLine(int $amount, ?string $note = null): int { return 1; }
}
interface Payable { public function total(): int; }
enum Status: string { case Open = 'open'; }
trait Stamps { public function stamp() {} }
function format_total(Invoice $i): string { function inner() {} return ''; }
";
    let ds = defs("src/Invoice.php", src);
    assert_eq!(
        listing(&ds),
        [
            "App.Billing class/class",
            "App.Billing.MAX class/class/assign",
            "App.Billing.MIN class/class/assign",
            "App.Billing.Invoice class/class/class",
            "App.Billing.Invoice.CURRENCY class/class/class/assign",
            "App.Billing.Invoice.lines class/class/class/assign",
            "App.Billing.Invoice.notes class/class/class/assign",
            "App.Billing.Invoice.addLine class/class/class/def",
            "App.Billing.Payable class/class/class",
            "App.Billing.Payable.total class/class/class/def",
            "App.Billing.Status class/class/class",
            "App.Billing.Status.Open class/class/class/assign",
            "App.Billing.Stamps class/class/class",
            "App.Billing.Stamps.stamp class/class/class/def",
            "App.Billing.format_total class/class/def",
            "App.Billing.format_total.inner class/class/def/def",
        ]
    );
    let q = |s: &str| format!("App.Billing.{s}");
    assert_eq!(
        role(src, &ds, &q("Invoice.addLine"), |d| Some(d.sig)),
        "public function addLine(int $amount, ?string $note = null): int"
    );
    assert_eq!(
        role(src, &ds, &q("Invoice.addLine"), |d| d.doc),
        "/** Adds. */"
    );
    assert_eq!(
        role(src, &ds, &q("Invoice.lines"), |d| Some(d.name)),
        "lines"
    );
    assert_eq!(role(src, &ds, &q("Invoice.lines"), |d| d.body), "[]");
    assert_eq!(role(src, &ds, &q("Status.Open"), |d| d.body), "'open'");
    // A braced namespace holds its definitions.
    let ds = defs(
        "a.php",
        "<?php\nnamespace A { class B {} }\nnamespace { function g() {} }\n",
    );
    assert_eq!(listing(&ds), ["A class", "A.B class/class", "g def"]);
}

#[test]
fn json_yaml_and_toml_keys_are_named_by_their_path() {
    let json = r#"{
  "name": "demo",
  "server": { "port": 8080, "tls": { "cert-file": "a.pem" } },
  "list": [{ "hidden": 1 }],
  "@types/node": "1", "esc\u0041": 2
}"#;
    let ds = defs("config/app.json", json);
    assert_eq!(
        listing(&ds),
        [
            "name assign",
            "server class",
            "server.port class/assign",
            "server.tls class/class",
            "server.tls.cert-file class/class/assign",
            "list assign",
        ]
    );
    assert_eq!(
        role(json, &ds, "server.tls.cert-file", |d| d.body),
        "\"a.pem\""
    );
    assert_eq!(role(json, &ds, "name", |d| Some(d.name)), "name");
    let yaml = "\
# Services.
services:
  web:
    image: nginx
    ports: [\"80:80\"]
  \"api\": {image: 'x', max-workers: 2}
---
other: 1
";
    let ds = defs("deploy/compose.yml", yaml);
    assert_eq!(
        listing(&ds),
        [
            "services class",
            "services.web class/class",
            "services.web.image class/class/assign",
            "services.web.ports class/class/assign",
            "services.api class/class",
            "services.api.image class/class/assign",
            "services.api.max-workers class/class/assign",
            "other assign",
        ]
    );
    assert_eq!(role(yaml, &ds, "services.api", |d| Some(d.name)), "api");
    assert_eq!(role(yaml, &ds, "services.web.image", |d| d.body), "nginx");
    assert_eq!(
        role(yaml, &ds, "services.web.image", |d| Some(d.sig)),
        "image:"
    );
    let toml = "\
# Title.
title = \"x\"
owner.name = \"Ada\"
inline = { a = 1 }

[server.tls]
\"cert-file\" = \"a.pem\"

[[plugins]]
name = \"p\"
";
    let ds = defs("Cargo.toml", toml);
    assert_eq!(
        listing(&ds),
        [
            "title assign",
            "owner.name class/assign",
            "inline class",
            "inline.a class/assign",
            "server.tls class/class",
            "server.tls.cert-file class/class/assign",
            "plugins class",
            "plugins.name class/assign",
        ]
    );
    assert_eq!(role(toml, &ds, "title", |d| d.doc), "# Title.");
    assert_eq!(
        role(toml, &ds, "server.tls", |d| Some(d.sig)),
        "[server.tls]"
    );
    assert_eq!(
        role(toml, &ds, "server.tls.cert-file", |d| Some(d.name)),
        "cert-file"
    );
}

#[test]
fn html_ids_and_css_rules() {
    let html = "\
<html><body>
  <nav id=\"main-nav\"><a id='home' href=\"/\">Home</a></nav>
  <main><form id=signup action=\"/s\"><input id=\"e-mail\"></form></main>
  <div id=\"has space\"></div>
</body></html>
";
    let ds = defs("site/index.html", html);
    assert_eq!(
        listing(&ds),
        [
            "main-nav class",
            "home class",
            "signup class",
            "e-mail class"
        ]
    );
    assert_eq!(
        role(html, &ds, "signup", |d| Some(d.sig)),
        "<form id=signup action=\"/s\">"
    );
    assert_eq!(role(html, &ds, "home", |d| Some(d.name)), "home");
    let css = "\
/* Layout. */
body { margin: 0; }
.nav, #content { padding: 1rem; }
.card .title:hover { color: red; }
.panel { .header { color: blue; } }
@media (max-width: 600px) { .sidebar { display: none; } }
@keyframes fade-in { from { opacity: 0; } }
";
    let ds = defs("site/site.css", css);
    assert_eq!(
        listing(&ds),
        [
            "body class",
            "nav class",
            "content class",
            "panel class",
            "panel.header class/class",
            "sidebar class",
            "fade-in class",
        ]
    );
    assert_eq!(role(css, &ds, "body", |d| d.doc), "/* Layout. */");
    assert_eq!(role(css, &ds, "content", |d| Some(d.sig)), ".nav, #content");
    assert_eq!(role(css, &ds, "content", |d| Some(d.name)), "content");
    assert_eq!(role(css, &ds, "sidebar", |d| d.body), "{ display: none; }");
}

#[test]
fn deep_keys_are_cut_off_not_a_stack_overflow() {
    let depth = 20_000;
    let json = "{\"a\": ".repeat(depth) + "1" + &"}".repeat(depth);
    let ds = defs("deep.json", &json);
    assert!(!ds.is_empty() && ds.len() <= MAX_DEPTH + 1);
    let toml = format!("{} = 1\nb = 2\n", vec!["k"; depth].join("."));
    assert_eq!(listing(&defs("deep.toml", &toml)), ["b assign"]);
}

#[test]
fn dockerfile_stages_hold_their_args_and_envs_and_cmake_functions() {
    let src = "\
ARG BASE=alpine
FROM ${BASE} AS build-env
ARG VERSION=1.0
ENV HOME=/app MODE=dev
# Ships.
FROM ${BASE} AS runtime
ENV HOME=/srv
FROM scratch
ARG LATE
";
    let ds = defs("build/Dockerfile", src);
    assert_eq!(
        listing(&ds),
        [
            "BASE assign",
            "build-env class",
            "build-env.VERSION class/assign",
            "build-env.HOME class/assign",
            "build-env.MODE class/assign",
            "runtime class",
            "runtime.HOME class/assign",
            "LATE assign",
        ]
    );
    assert_eq!(role(src, &ds, "build-env.VERSION", |d| d.body), "1.0");
    assert_eq!(
        role(src, &ds, "build-env.MODE", |d| Some(d.node)),
        "MODE=dev"
    );
    assert_eq!(role(src, &ds, "runtime", |d| d.doc), "# Ships.\n");
    let cmake = "\
project(demo C)
# Adds.
function(demo_add name)
  add_library(${name})
endfunction()
macro(demo_opt var)
endmacro()
";
    let ds = defs("CMakeLists.txt", cmake);
    assert_eq!(listing(&ds), ["demo_add def", "demo_opt def"]);
    assert_eq!(
        role(cmake, &ds, "demo_add", |d| Some(d.sig)),
        "function(demo_add name)"
    );
    assert_eq!(role(cmake, &ds, "demo_add", |d| d.doc), "# Adds.");
    // A second `namespace` statement is not nested in the first.
    let php = "<?php\nnamespace A;\nfunction f() {}\nnamespace B;\nfunction g() {}\n";
    assert_eq!(
        listing(&defs("two.php", php)),
        ["A class", "A.f class/def", "B class", "B.g class/def"]
    );
}
