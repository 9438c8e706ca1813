#!/usr/bin/env sh
# Regenerates spec/relay/protobuf/gen/ (the reference codec the relay specs hold src/relay/frames.ts to) from proto/relay.proto with @bufbuild/protoc-gen-es.
set -eu
cd "$(dirname "$0")"
rm -rf gen
PATH="$(cd ../.. && pwd)/node_modules/.bin:$PATH" npx buf generate
