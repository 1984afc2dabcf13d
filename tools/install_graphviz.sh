#!/usr/bin/env sh
# Install Graphviz (`dot`) for the review diagram, where this machine allows it.
# Never fails the build: without Graphviz, `smddp-infra review` still writes the Mermaid
# diagram and the Graphviz source (network.dot) and says in the summary that no image was drawn.
set -u
if command -v dot >/dev/null 2>&1; then
  echo "graphviz: $(dot -V 2>&1)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "graphviz: not installed and apt-get is not available here; install Graphviz yourself" \
       "(e.g. 'brew install graphviz') to get docs/review/network.svg. Continuing without it."
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "graphviz: not installed, and installing it needs root (apt-get install graphviz);" \
         "skipping the SVG diagram (the review still has the Mermaid diagram and network.dot)."
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if [ -n "$SUDO" ]; then how="with passwordless sudo"; else how="as root"; fi
echo "graphviz: \`dot\` is missing; installing it for the SVG diagram: ${SUDO:+sudo -n }apt-get install graphviz ($how)"
if $SUDO apt-get install -y -qq --no-install-recommends graphviz >/dev/null 2>&1 \
   || { $SUDO apt-get update -qq >/dev/null 2>&1 \
        && $SUDO apt-get install -y -qq --no-install-recommends graphviz >/dev/null 2>&1; }; then
  echo "graphviz: installed $(dot -V 2>&1)"
else
  echo "graphviz: 'apt-get install graphviz' failed (offline or no package index);" \
       "skipping the SVG diagram (the review still has the Mermaid diagram and network.dot)."
fi
exit 0
