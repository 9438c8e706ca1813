#!/usr/bin/env sh
# Regenerates src/relay/gen/ from src/relay/proto/relay.proto with @bufbuild/protoc-gen-es.
set -eu
cd "$(dirname "$0")"
rm -rf gen
PATH="$(cd ../.. && pwd)/node_modules/.bin:$PATH" npx buf generate
