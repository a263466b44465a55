#!/bin/sh
# Builds fuzz/corpus/<target>/ (all targets, or those named) from the project's test data and
# ../shared/fixtures. With PROMPTWIRE=path/to/promptwire, first imports every captured body into
# fuzz/imported-prompts/ (Prompt seeds for compile_prompt).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${PROMPTWIRE:-}" ]; then
    mkdir -p "$here/imported-prompts"
    for body in "$here"/../tests/data/bodies/*.json "$here"/../tests/data/*/*/req_*[0-9].json \
        "$here"/../../shared/fixtures/*/*/req_*[0-9].json "$here"/../../../shared/fixtures/*/*/req_*[0-9].json; do
        [ -f "$body" ] || continue
        name=$(echo "$body" | sed 's|.*/\([^/]*\)/\([^/]*\)\.json$|\1_\2|')
        "$PROMPTWIRE" import-body "$body" > "$here/imported-prompts/$name.json" 2>/dev/null \
            || rm -f "$here/imported-prompts/$name.json"
    done
fi
exec python3 "$here/seed.py" "$@"
