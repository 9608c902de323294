#!/usr/bin/env bash
# apt_download.sh - fetch pinned Debian packages (.deb files) by name, through apt, from a
# Debian suite other than the machine's own (e.g. trixie on a bookworm machine).
#
# Usage: bash scripts/apt_download.sh SUITE DEST_DIR PKG=VERSION [PKG=VERSION ...]
#
# The archive is the one the machine's own apt sources already name for its release (read
# with `apt-get indextargets`), with the suite replaced by SUITE. apt runs on a temporary
# sources list, lists, cache and empty dpkg status (all removed at the end), so the
# machine's apt configuration and state are left as they were. Debian's archive keys for
# SUITE must be in apt's trusted keyring (debian-archive-keyring ships the next release's).
# Prints the path of each downloaded .deb, one a line, in the order asked.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 SUITE DEST_DIR PKG=VERSION..." >&2; exit 2; }
suite=$1 dest=$2
shift 2
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || { echo "apt_download: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
uri=$(apt-get indextargets --format '$(TARGET_OF) $(RELEASE) $(REPO_URI)' |
  awk -v c="$codename" '$1 == "deb" && $2 == c { print $3; exit }')
[ -n "$uri" ] || { echo "apt_download: no apt source for $codename on this machine" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/out"
echo "deb $uri $suite main" >"$tmp/sources.list"
: >"$tmp/status"
opts=(
  -o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
  -o "Dir::Etc::Preferences=$tmp/none" -o "Dir::Etc::PreferencesParts=$tmp/parts"
  -o "Dir::State::Lists=$tmp/lists" -o "Dir::State::status=$tmp/status"
  -o "Dir::Cache=$tmp/cache" -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1"
)
apt-get "${opts[@]}" -qq update
(cd "$tmp/out" && apt-get "${opts[@]}" -qq download "$@")
mkdir -p "$dest"
for spec in "$@"; do
  name=${spec%%=*}
  # apt names the file NAME_VERSION_ARCH.deb with the epoch's colon escaped.
  f=$(find "$tmp/out" -maxdepth 1 -name "${name}_*.deb" | head -n1)
  [ -n "$f" ] || { echo "apt_download: $spec was not downloaded" >&2; exit 1; }
  mv "$f" "$dest/$name.deb"
  echo "$dest/$name.deb"
done
