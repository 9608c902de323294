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
