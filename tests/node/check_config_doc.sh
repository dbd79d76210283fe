#!/bin/sh
# docs/CONFIG.md must carry the key table exactly as `gcnode run --help-config`
# prints it (the table in node/gc_config.c is the source of truth).
set -eu
gcnode=$1
doc=$2
"$gcnode" run --help-config | while IFS= read -r line; do
  if ! grep -qxF -- "$line" "$doc"; then
    echo "docs/CONFIG.md lacks: $line"
    exit 1
  fi
done
