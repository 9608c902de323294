//! Parser and printer tests: one table per form, the error table, and the round-trip
//! properties over generated specs (a small deterministic generator, no extra crate).

use super::*;
use crate::error::ErrorCode;

fn cursor(path: &str, line: u32, col: u32) -> PositionSpec {
    PositionSpec::Cursor {
        path: path.into(),
        line,
        col: Some(col),
        name: None,
        occurrence: None,
        indexing: None,
        doc_version: None,
    }
}

fn dv() -> String {
    format!("sha256:{}", "ab".repeat(32))
}

#[test]
fn parses_cursor_range_and_name_forms() {
    assert_eq!(
        parse("src/app.py@L42:C7").unwrap(),
        cursor("src/app.py", 42, 7)
    );
    assert_eq!(
        parse("src/app.py@R(42,7->44,1)").unwrap(),
        PositionSpec::Range {
            path: "src/app.py".into(),
            start: [42, 7],
            end: [44, 1],
            indexing: None,
            doc_version: None
        }
    );
    match parse("a.py@L3:load#2").unwrap() {
        PositionSpec::Cursor {
            name,
            occurrence,
            col,
            ..
        } => {
            assert_eq!(name.as_deref(), Some("load"));
            assert_eq!(occurrence, Some(2));
            assert_eq!(col, None);
        }
        other => panic!("{other:?}"),
    }
    // An identifier that starts with C is a name, not a column.
    match parse("a.py@L3:Circle").unwrap() {
        PositionSpec::Cursor { name, .. } => assert_eq!(name.as_deref(), Some("Circle")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn parses_symbolic_forms() {
    let spec = parse("py://shapes.geometry#Circle.area:body").unwrap();
    assert_eq!(
        spec,
        PositionSpec::Symbol {
            module: "shapes.geometry".into(),
            qualname: "Circle.area".into(),
            role: Some(Role::Body),
            overload: None,
            doc_version: None,
        }
    );
    let spec = parse(&format!(
        "py://shapes.geometry#scale:sig?overload=1&docVersion={}",
        dv()
    ))
    .unwrap();
    match spec {
        PositionSpec::Symbol {
            role,
            overload,
            doc_version,
            ..
        } => {
            assert_eq!(role, Some(Role::Sig));
            assert_eq!(overload, Some(1));
            assert_eq!(doc_version, Some(dv()));
        }
        other => panic!("{other:?}"),
    }
    // Query keys in any order; unicode identifiers.
    let a = parse(&format!("py://形状#面积?docVersion={}&overload=0", dv())).unwrap();
    let b = parse(&format!("py://形状#面积?overload=0&docVersion={}", dv())).unwrap();
    assert_eq!(a, b);
    assert_eq!(
        a.to_canonical(),
        format!("py://形状#面积?overload=0&docVersion={}", dv())
    );
}

#[test]
fn parses_ast_paths() {
    let spec = parse("ast://[module=pkg.mod]/[class=C]/[def=m]/name[1]").unwrap();
    assert_eq!(
        spec,
        PositionSpec::Ast {
            path: vec![
                AstSegment(SegmentKind::Module, "pkg.mod".into()),
                AstSegment(SegmentKind::Class, "C".into()),
                AstSegment(SegmentKind::Def, "m".into()),
            ],
            node: Some(NodePick {
                kind: "name".into(),
                index: 1
            }),
            doc_version: None,
        }
    );
    let spec = parse("ast://[module=m]/[assign=X]").unwrap();
    assert!(matches!(spec, PositionSpec::Ast { node: None, .. }));
    // The JSON shape of docs/selectors.md#json-positionspec.
    let j = parse(
        r#"{"kind":"ast","path":[["module","m"],["def","f"]],"node":{"kind":"call","index":2}}"#,
    )
    .unwrap();
    assert_eq!(j.to_canonical(), "ast://[module=m]/[def=f]/call[2]");
}

#[test]
fn parses_anchors_with_escapes() {
    let spec = parse(r#"anchor://src/app.py#"def load_data("?ctx=24"#).unwrap();
    assert_eq!(
        spec,
        PositionSpec::Anchor {
            path: "src/app.py".into(),
            snippet: "def load_data(".into(),
            ctx: Some(24),
            hash: None,
            doc_version: None,
        }
    );
    assert_eq!(
        spec.to_canonical(),
        r#"anchor://src/app.py#"def%20load_data("?ctx=24"#
    );
    let h = format!("sha1:{}", "0f".repeat(20));
    let s = format!(r#"anchor://a%20b.py#"x%20=%20%22%23%3F\"%0A"?hash={h}&ctx=3"#);
    match parse(&s).unwrap() {
        PositionSpec::Anchor {
            path,
            snippet,
            ctx,
            hash,
            ..
        } => {
            assert_eq!(path, "a b.py");
            assert_eq!(snippet, "x = \"#?\"\n");
            assert_eq!(ctx, Some(3));
            assert_eq!(hash, Some(h));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn canonical_form_round_trips() {
    let dv = dv();
    for s in [
        "src/app.py@L42:C7".to_string(),
        "src/app.py@R(1,1->2,3)".to_string(),
        "a%20b%23c.py@L1:名前#3".to_string(),
        format!("x.py@L2:C1?docVersion={dv}"),
        "py://a.b#C.m:doc".to_string(),
        format!("py://a#f?overload=2&docVersion={dv}"),
        "ast://[module=a]/[class=C]/[def=m]/identifier[3]".to_string(),
        format!("ast://[module=a.b]?docVersion={dv}"),
        "sym://web/app.ts#Greeter.greet:sig".to_string(),
        format!("sym://a%20b.go#Counter.Add?docVersion={dv}"),
        "sym://web/app.js#$init".to_string(),
        "ast://[file=src/lib.rs]/[class=Counter]/[def=add]/identifier[1]".to_string(),
        "ast://[file=a%5Db.ts]/[def=$f]".to_string(),
        "sym://deploy/compose.yaml#services.web-app.max-workers:body".to_string(),
        "ast://[file=site.css]/[class=btn-primary]".to_string(),
        r#"anchor://file:///C:/w/a%20b.py#"%22x%22%5C%25"?ctx=0"#.to_string(),
    ] {
        let spec = parse(&s).unwrap();
        assert_eq!(spec.to_canonical(), s);
        assert_eq!(parse(&spec.to_canonical()).unwrap(), spec);
    }
}

#[test]
fn json_form_is_accepted() {
    let spec = parse(r#"{"kind":"cursor","path":"a.py","line":1,"col":2}"#).unwrap();
    assert_eq!(spec, cursor("a.py", 1, 2));
    let spec =
        parse(r#"{"kind":"symbol","qualname":"pkg.mod:Class.method","role":"sig","overload":0}"#)
            .unwrap();
    assert_eq!(
        spec.to_canonical(),
        "py://pkg.mod#Class.method:sig?overload=0"
    );
    let e = parse(r#"{"kind":"symbol","module":"a b","qualname":"f"}"#).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadSelectorSyntax);
    assert!(
        e.message.contains("does not form a valid selector"),
        "{}",
        e.message
    );
    let e = parse(r#"{"kind":"range","path":"a.py","start":[0,1],"end":[1,1]}"#).unwrap_err();
    assert!(e.message.contains("start line"), "{}", e.message);
    let e = parse(r#"{"kind":"anchor","path":"a.py","snippet":"x","bogus":1}"#).unwrap_err();
    assert!(e.message.contains("unknown field"), "{}", e.message);
    let spec =
        parse(r#"{"kind":"sym","path":"web/a b.ts","qualname":"A.m","role":"body"}"#).unwrap();
    assert_eq!(spec.to_canonical(), "sym://web/a%20b.ts#A.m:body");
    let spec = parse(r#"{"kind":"ast","path":[["file","x]y.go"],["def","F"]]}"#).unwrap();
    assert_eq!(spec.to_canonical(), "ast://[file=x%5Dy.go]/[def=F]");
    // The cursor's unit survives the normalization.
    let spec =
        parse(r#"{"kind":"cursor","path":"a.py","line":1,"col":2,"indexing":"utf-8"}"#).unwrap();
    assert_eq!(spec.indexing(), Some(crate::text::Encoding::Utf8));
}

#[test]
fn errors_name_offset_and_expectation() {
    let cases = [
        ("a.py", "byte 4: expected '@' after the path"),
        ("a.py@L0:C1", "byte 6: expected a line number"),
        ("a.py@L1C1", "byte 7: expected ':' after the line number"),
        ("a.py@L1:C1x", "byte 10: expected end of the position"),
        ("a.py@R(1,2-3,4)", "byte 10: expected '->'"),
        (
            "a.py@R(2,1->1,1)",
            "byte 7: range end 1,1 is before its start 2,1",
        ),
        ("a.py@L1:C1?v=1", "byte 11: expected 'docVersion='"),
        ("a.py@L1:+", "byte 8: expected 'C<column>' or an identifier"),
        ("py://", "byte 5: expected a module name"),
        ("py://a.", "byte 7: expected a module name part after '.'"),
        ("py://a#b.", "byte 9: expected an identifier after '.'"),
        ("py://a", "byte 6: expected '#' after the module name"),
        ("py://a#1f", "byte 7: expected a qualified name"),
        (
            "py://a#f:bod",
            "byte 9: expected a role: def, sig, body or doc",
        ),
        (
            "py://a#f?ctx=1",
            "byte 9: expected 'overload=' or 'docVersion='",
        ),
        (
            "py://a#f?overload=x",
            "byte 18: expected a non-negative integer",
        ),
        (
            "py://a#f?overload=1&overload=2",
            "byte 20: 'overload' given twice",
        ),
        (
            "py://a#f x",
            "byte 8: expected '?' or the end of the selector",
        ),
        ("ast://[class=C]", "byte 6: expected '[module=' or '[file='"),
        ("sym://#f", "byte 6: expected a file path"),
        ("sym://a.ts", "byte 10: expected '#' after the path"),
        ("sym://a.ts#", "byte 11: expected a qualified name"),
        ("sym://a.ts#f:x", "byte 13: expected a role"),
        ("sym://a.ts#f?overload=1", "byte 13: expected 'docVersion='"),
        ("sym://a.json#-a", "byte 13: expected a qualified name"),
        (
            "sym://a.json#a.-b",
            "byte 15: expected an identifier after '.'",
        ),
        ("py://m#a-b", "byte 8: expected '?' or the end"),
        ("ast://[file=]", "byte 12: expected a file path"),
        (
            "ast://[file=a.ts]/[file=b.ts]",
            "byte 19: expected a segment kind",
        ),
        (
            "ast://[module=m]/[module=n]",
            "byte 18: expected a segment kind",
        ),
        (
            "ast://[module=m]/[lambda=f]",
            "byte 18: expected a segment kind",
        ),
        ("ast://[module=m]/[def=f", "byte 23: expected ']'"),
        (
            "ast://[module=m]/call",
            "byte 21: expected '[' after the node kind",
        ),
        ("ast://[module=m]/call[0]", "byte 22: expected a node index"),
        (
            "ast://[module=m]/call[1]/x",
            "byte 24: expected '?' or the end",
        ),
        ("anchor://#\"x\"", "byte 9: expected a file path"),
        ("anchor://a.py", "byte 13: expected '#' after the path"),
        (
            "anchor://a.py#x",
            "byte 14: expected '\"' opening the snippet",
        ),
        (
            "anchor://a.py#\"x\"?ctx=1&hash=md5:1",
            "byte 29: expected 'sha1:' and 40 hex",
        ),
        (
            "anchor://a.py#\"x\"?docVersion=sha256:12",
            "byte 29: expected 'sha256:' and 64",
        ),
    ];
    for (input, want) in cases {
        let err = parse(input).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadSelectorSyntax, "{input}");
        assert_eq!(err.code.exit_code(), 2);
        assert!(err.message.contains(want), "{input}: {}", err.message);
        assert!(!err.message.contains('\n'), "{input}");
    }
}

#[test]
fn file_uris_decode() {
    assert_eq!(
        parse("file:///tmp/a%20b.py@L1:C1").unwrap().path(),
        Some("/tmp/a b.py")
    );
    for s in [
        "file:///C:/w/a.py@L1:C1",
        "file:///c:/w/a.py@L1:C1",
        "file://localhost/C:/w/a.py@L1:C1",
    ] {
        let spec = parse(s).unwrap();
        assert_eq!(spec.path(), Some("C:/w/a.py"), "{s}");
        assert_eq!(spec.to_canonical(), "file:///C:/w/a.py@L1:C1");
    }
    // A backslashed drive path from JSON prints as the URI and reads back as C:/….
    let spec = parse(r#"{"kind":"cursor","path":"d:\\w\\a b.py","line":1,"col":1}"#).unwrap();
    assert_eq!(spec.path(), Some("D:/w/a b.py"));
    assert_eq!(spec.to_canonical(), "file:///D:/w/a%20b.py@L1:C1");
}

/// xorshift64*: a deterministic generator for the property tests.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn maybe<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        (self.below(2) == 0).then(|| f(self))
    }
    fn ident(&mut self) -> String {
        let starts = ["a", "_", "Z", "名", "é", "x"];
        let rest = ["", "b", "_1", "9", "前", "Ω", "z"];
        let mut s = self.pick(&starts[..]).to_string();
        for _ in 0..self.below(4) {
            let r: &&str = self.pick(&rest);
            s.push_str(r);
        }
        s
    }
    fn dotted(&mut self) -> String {
        let n = 1 + self.below(3);
        (0..n).map(|_| self.ident()).collect::<Vec<_>>().join(".")
    }
    fn text(&mut self, alphabet: &[&str]) -> String {
        let n = 1 + self.below(8);
        (0..n).map(|_| *self.pick(alphabet)).collect()
    }
    fn path(&mut self) -> String {
        let chars = [
            "a", "/", ".", "#", "?", "%", "\"", " ", "@", "形", "😀", "-", "\\", "\t", "=", "&",
        ];
        match self.below(4) {
            // Drive paths are normalized to forward slashes: generate them that way.
            0 => format!(
                "{}:/{}",
                self.pick(&["C", "D", "z"]).to_uppercase(),
                self.text(&chars).replace('\\', "/")
            ),
            1 => format!("/{}", self.text(&chars)),
            _ => format!("x{}", self.text(&chars)),
        }
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from_digit(self.below(16) as u32, 16).unwrap_or('0'))
            .collect()
    }
    fn spec(&mut self) -> PositionSpec {
        let dv = self.maybe(|g| format!("sha256:{}", g.hex(64)));
        let n = |g: &mut Gen| 1 + g.below(5000) as u32;
        match self.below(6) {
            0 => {
                let named = self.below(2) == 0;
                PositionSpec::Cursor {
                    path: self.path(),
                    line: n(self),
                    col: (!named).then(|| n(self)),
                    name: named.then(|| self.ident()),
                    occurrence: if named {
                        self.maybe(|g| 2 + g.below(9) as u32)
                    } else {
                        None
                    },
                    indexing: None,
                    doc_version: dv,
                }
            }
            1 => {
                let (a, b, c, d) = (n(self), n(self), n(self), n(self));
                let (start, end) = if (a, b) <= (c, d) {
                    ([a, b], [c, d])
                } else {
                    ([c, d], [a, b])
                };
                PositionSpec::Range {
                    path: self.path(),
                    start,
                    end,
                    indexing: None,
                    doc_version: dv,
                }
            }
            2 => PositionSpec::Symbol {
                module: self.dotted(),
                qualname: self.dotted(),
                role: self.maybe(|g| *g.pick(&Role::ALL)),
                overload: self.maybe(|g| g.below(4) as u32),
                doc_version: dv,
            },
            3 => {
                let first = if self.below(2) == 0 {
                    AstSegment(SegmentKind::Module, self.dotted())
                } else {
                    AstSegment(SegmentKind::File, self.path())
                };
                let mut path = vec![first];
                for _ in 0..self.below(4) {
                    let kind = *self.pick(&SegmentKind::ALL[1..4]);
                    path.push(AstSegment(kind, self.ident()));
                }
                PositionSpec::Ast {
                    path,
                    node: self.maybe(|g| NodePick {
                        kind: g
                            .pick(&["identifier", "call", "name", "string"])
                            .to_string(),
                        index: 1 + g.below(9) as u32,
                    }),
                    doc_version: dv,
                }
            }
            4 => PositionSpec::Sym {
                path: self.path(),
                qualname: self.dotted(),
                role: self.maybe(|g| *g.pick(&Role::ALL)),
                doc_version: dv,
            },
            _ => {
                let chars = [
                    "def", " ", "(", "\"", "\\", "/", "#", "?", "%", "\n", "\t", "&", "=", "😀",
                    "名", "'", "%22", "\\\"",
                ];
                PositionSpec::Anchor {
                    path: self.path(),
                    snippet: self.text(&chars),
                    ctx: self.maybe(|g| g.below(100) as u32),
                    hash: self.maybe(|g| format!("sha1:{}", g.hex(40))),
                    doc_version: dv,
                }
            }
        }
    }
}

#[test]
fn property_parse_of_print_is_identity() {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    for i in 0..20_000 {
        let spec = g.spec();
        let printed = spec.to_canonical();
        let back = parse(&printed).unwrap_or_else(|e| panic!("#{i} {spec:?} → {printed}: {e}"));
        assert_eq!(back, spec, "#{i}: {printed}");
        // The JSON form reads back to the same spec too.
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(parse(&json).unwrap(), spec, "#{i}: {json}");
    }
}

#[test]
fn property_parser_never_panics_and_prints_stably() {
    let mut g = Gen(0xD1B5_4A32_D192_ED03);
    let pieces = [
        "py://",
        "sym://",
        "ast://",
        "[file=",
        "anchor://",
        "file:///",
        "a.py",
        "@",
        "L",
        "R(",
        "C",
        "1",
        "0",
        ":",
        "#",
        "\"",
        "\\",
        "%",
        "%2",
        "%41",
        "?",
        "&",
        "=",
        "docVersion=",
        "overload=",
        "ctx=",
        "hash=",
        "[",
        "]",
        "/",
        "module",
        "class=",
        "def",
        ".",
        "->",
        ",",
        ")",
        "名",
        "😀",
        "\u{0}",
        "{",
        "}",
    ];
    for _ in 0..50_000 {
        let n = g.below(12);
        let s: String = (0..n).map(|_| *g.pick(&pieces)).collect();
        if let Ok(spec) = parse(&s) {
            // Whatever parses prints to a fixed point.
            let p = spec.to_canonical();
            assert_eq!(parse(&p).unwrap().to_canonical(), p, "{s}");
        }
    }
    // Arbitrary bytes (lossily decoded) never panic either.
    for _ in 0..20_000 {
        let bytes: Vec<u8> = (0..g.below(40)).map(|_| g.below(256) as u8).collect();
        let _ = parse(&String::from_utf8_lossy(&bytes));
    }
}

/// Fuzz find (selector_json): a path starting with `{` (after blanks) printed a canonical
/// form that the command line then read as JSON and refused.
#[test]
fn path_starting_with_a_brace_prints_a_selector_that_reads_back() {
    for path in ["{x}.py", "\u{2003}{b.py", "a{b}.py"] {
        let spec = cursor(path, 3, 4);
        let printed = spec.to_canonical();
        assert_eq!(parse(&printed).unwrap(), spec, "{printed}");
    }
    assert_eq!(cursor("{x}.py", 1, 1).to_canonical(), "%7Bx}.py@L1:C1");
    assert_eq!(cursor("a{b}.py", 1, 1).to_canonical(), "a{b}.py@L1:C1");
}
