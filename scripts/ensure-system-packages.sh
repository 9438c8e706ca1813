#!/usr/bin/env bash
# Makes sure the system programs the test suite starts are installed: Chromium (browser
# tests), bubblewrap (the executor's sandbox), redis-server (the rendezvous cluster).
# As root on Debian it installs what is missing (apt-get update once, then apt-get install -y);
# anywhere else it stops and prints the exact command to run.
set -euo pipefail

declare -A program_of=([chromium]=chromium [bubblewrap]=bwrap [redis-server]=redis-server)
missing=()
for package in chromium bubblewrap redis-server; do
  command -v "${program_of[$package]}" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

command="apt-get update && apt-get install -y ${missing[*]}"
if [ "$(id -u)" -eq 0 ] && [ -f /etc/debian_version ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing the system packages the tests need: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
echo "The tests need these system packages: ${missing[*]}" >&2
echo "Install them with: sudo sh -c '$command'" >&2
exit 1
