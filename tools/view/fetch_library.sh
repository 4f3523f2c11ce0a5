#!/usr/bin/env bash
# Fetches the graph library pinned in tools/view/cytoscape.lock (the HTML pages of
# `amem view`, docs/VIEW.md) into DIR (default third_party/cytoscape under the
# source tree): the npm tarball, checked against its sha512 integrity, then its
# dist/cytoscape.min.js, LICENSE and a VERSION file. Needs curl only, no Node.
# Does nothing, and asks no server, when DIR already holds that version.
# CMake embeds what it finds there into the amem binary (tools/view/view.cmake).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$src/third_party/cytoscape}
lock=$src/tools/view/cytoscape.lock
field() { sed -n "s/^$1=//p" "$lock"; }
name=$(field name) version=$(field version) url=$(field tarball) integrity=$(field integrity)
if [[ -f $dir/VERSION && $(cat "$dir/VERSION") == "$name@$version" &&
      -s $dir/cytoscape.min.js && -s $dir/LICENSE ]]; then
  exit 0
fi
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
tar -xzf "$tmp/pkg.tgz" -C "$tmp" package/dist/cytoscape.min.js package/LICENSE
mkdir -p "$dir"
cp "$tmp/package/dist/cytoscape.min.js" "$tmp/package/LICENSE" "$dir/"
echo "$name@$version" > "$dir/VERSION"
