#!/usr/bin/env sh
# .venv-floor: the lowest supported versions, and both cdk-nag majors, in ONE venv.
#   core   aws-cdk-lib + constructs at pyproject.toml's floors (requirements-floor.txt): no cfn-lint,
#          rich or PyYAML, so it also proves the constructs need only the core install;
#   nag3/  cdk-nag 3 at its floor (the [nag] extra), selected with PYTHONPATH=.venv-floor/nag3;
#   nag2/  cdk-nag 2 (what platforms on the Aspect API run), PYTHONPATH=.venv-floor/nag2.
# cdk-nag's own dependencies (jsii, publication, typeguard) are aws-cdk-lib's, already in the venv,
# so each major is a --no-deps --target directory of a few MB instead of a second aws-cdk-lib.
set -eu
venv="${1:-.venv-floor}"
python="${PYTHON:-python3}"
NAG3_FLOOR="cdk-nag==3.0.2"
NAG2="cdk-nag==2.38.2"
# uv (the Makefile passes UV=.venv-uv/bin/uv) installs these pins in seconds; without it, pip.
# No bytecode compile at install (aws-cdk-lib's every service: 15 s of CPU): the first test process
# compiles what it imports and writes the .pyc for the others.
uv="${UV:-}"
rm -rf "$venv/nag3" "$venv/nag2"
if [ -n "$uv" ]; then
  test -x "$venv/bin/python" || "$uv" venv --quiet --python "$python" "$venv"
  "$uv" pip install --quiet --python "$venv/bin/python" -r requirements-floor.txt
  "$uv" pip install --quiet --python "$venv/bin/python" --no-deps --target "$venv/nag3" "$NAG3_FLOOR"
  "$uv" pip install --quiet --python "$venv/bin/python" --no-deps --target "$venv/nag2" "$NAG2"
else
  pip_flags="--quiet --disable-pip-version-check"
  test -x "$venv/bin/python" || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install $pip_flags -r requirements-floor.txt
  "$venv/bin/python" -m pip install $pip_flags --no-deps --target "$venv/nag3" "$NAG3_FLOOR"
  "$venv/bin/python" -m pip install $pip_flags --no-deps --target "$venv/nag2" "$NAG2"
fi
touch "$venv/.installed"
