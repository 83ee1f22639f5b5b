# Sourced by scripts/run and scripts/test: create or refresh .venv at the repository root and
# install the project into it (editable). Set NOUS_EXTRAS=dev for the development tools.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.nous-installed"
SPEC="$ROOT${NOUS_EXTRAS:+[$NOUS_EXTRAS]}"
HASH="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)-${NOUS_EXTRAS:-}"
if [ ! -f "$STAMP" ] || ! grep -qx -- "$HASH" "$STAMP"; then
  echo "installing nous into $VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  # the distribution was called `nous` before it became `nous-context`: drop the old one first
  "$VENV/bin/python" -m pip uninstall --quiet --yes nous >/dev/null 2>&1 || true
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$SPEC" >&2
  echo "$HASH" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
