#!/usr/bin/env python3
"""Check lanser's schemas with an independent validator (Python `jsonschema`, draft 2020-12).

Usage: validate_schemas.py SCHEMA_DIR VALID.json INVALID.json

- every SCHEMA_DIR/*.schema.json is a valid draft 2020-12 schema;
- every entry of VALID ([{"kind", "doc"}]) validates against KIND.schema.json;
- every entry of INVALID ([{"kind", "name", "doc"}]) is rejected by KIND.schema.json.

Run by tests/cli/schemas.rs; CI installs the pinned module (.ci/run).
"""

import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("validate_schemas.py: the Python module jsonschema is missing: "
             "python3 -m pip install jsonschema==4.26.0")


def load(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def main():
    schema_dir, valid, invalid = sys.argv[1:4]
    validators = {}
    for path in sorted(pathlib.Path(schema_dir).glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        kind = path.name.split(".")[0]
        validators[kind] = jsonschema.Draft202012Validator(schema)
    if sorted(validators) != ["batch", "bundle", "selector", "trace"]:
        sys.exit(f"expected four schemas, found {sorted(validators)}")

    failures = 0
    docs = load(valid)
    for i, case in enumerate(docs):
        for err in validators[case["kind"]].iter_errors(case["doc"]):
            failures += 1
            print(f"valid[{i}] ({case['kind']}): {err.json_path}: {err.message}")
    for case in load(invalid):
        if validators[case["kind"]].is_valid(case["doc"]):
            failures += 1
            print(f"accepted an invalid {case['kind']} ({case['name']})")
    if failures:
        sys.exit(f"{failures} failure(s)")
    print(f"{len(validators)} schemas ok; {len(docs)} valid document(s) accepted; "
          "invalid examples rejected")


if __name__ == "__main__":
    main()
