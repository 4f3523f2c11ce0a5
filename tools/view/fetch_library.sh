#!/usr/bin/env bash
# Fetches a JavaScript library pinned in a lock file (default tools/view/cytoscape.lock,
# the graph library of `amem view`'s HTML pages, docs/VIEW.md) into DIR (default
# third_party/<name> under the source tree): the npm tarball, checked against its
# sha512 integrity, then the lock's `files` (default dist/<name>.min.js and
# LICENSE) and a VERSION file. Needs curl only, no Node. Does nothing, and asks no
# server, when DIR already holds that version.
# Usage: fetch_library.sh [DIR [LOCK]]
# CMake embeds what it finds in third_party/cytoscape into the amem binary
# (tools/view/view.cmake); the view tests render Mermaid with tests/view/mermaid.lock's.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
lock=${2:-$src/tools/view/cytoscape.lock}
field() { sed -n "s/^$1=//p" "$lock"; }
name=$(field name) version=$(field version) url=$(field tarball) integrity=$(field integrity)
files=$(field files)
files=${files:-dist/$name.min.js LICENSE}
dir=${1:-$src/third_party/$name}
have_all() {
  [[ -f $dir/VERSION && $(cat "$dir/VERSION") == "$name@$version" ]] || return 1
  local f
  for f in $files; do [[ -s $dir/$(basename "$f") ]] || return 1; done
}
have_all && exit 0
command -v curl >/dev/null || { echo "fetch_library.sh: curl is missing (apt-get install curl)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch_library.sh: downloading $name@$version from the npm registry" >&2
curl -fsSL --retry 3 -o "$tmp/pkg.tgz" "$url"
want=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
have=$(sha512sum "$tmp/pkg.tgz" | cut -d' ' -f1)
if [[ $want != "$have" ]]; then
  echo "fetch_library.sh: $url does not match the integrity in $lock; nothing installed" >&2
  exit 1
fi
members=()
for f in $files; do members+=("package/$f"); done
tar -xzf "$tmp/pkg.tgz" -C "$tmp" "${members[@]}"
mkdir -p "$dir"
for f in $files; do cp "$tmp/package/$f" "$dir/"; done
echo "$name@$version" > "$dir/VERSION"
