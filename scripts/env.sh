# Sourced by scripts/serve and scripts/test: make sure .venv exists with the project installed
# (EXTRAS selects extras, e.g. "dev") and that redis-server is on the PATH (and, for the tests,
# node, chromium and tmux). Idempotent and quiet when everything is already in place; it
# reinstalls only when pyproject.toml changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${OASIS_VENV:-$ROOT/.venv}"
EXTRAS="${EXTRAS:-}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  echo "oasis: installing Debian packages: $*" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

pick_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return
    fi
  done
  echo "oasis: Python >= 3.11 is required" >&2
  exit 1
}

if [ ! -x "$VENV/bin/python" ]; then
  PY="$(pick_python)"
  if ! "$PY" -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    apt_install python3-venv
    "$PY" -m venv "$VENV"
  fi
fi

# The stamp records what was installed: the pyproject.toml it came from and the extras. An install
# with the dev extras also serves scripts/serve, so the two commands never undo each other.
stamp="$VENV/.oasis-installed"
digest="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
want="$digest extras=$EXTRAS"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$have" != "$want" ] && { [ -n "$EXTRAS" ] || [ "${have%% *}" != "$digest" ]; }; then
  echo "oasis: installing the project into $VENV" >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v '^WARNING: Location' >&2 || true
  spec="$ROOT"
  [ -n "$EXTRAS" ] && spec="$ROOT[$EXTRAS]"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$spec" 2>&1 |
    grep -v '^WARNING: Location' >&2 || true
  "$VENV/bin/python" -c 'import protocol, games' # fails loudly if the install did not happen
  echo "$want" >"$stamp"
fi

if ! command -v redis-server >/dev/null 2>&1; then
  apt_install redis-server
fi

# The checks of the browser client (scripts/test) need Node (its tests) and Chromium (the browser
# tests drive Debian's chromium through Playwright; nothing downloads a browser of its own); the
# terminal client's full-screen tests run it in tmux.
if [[ "$EXTRAS" == *dev* ]]; then
  missing=()
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v tmux >/dev/null 2>&1 || missing+=(tmux)
  if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
  fi
fi

export PATH="$VENV/bin:$PATH"
cd "$ROOT"
