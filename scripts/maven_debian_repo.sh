#!/usr/bin/env bash
# maven_debian_repo.sh - a Maven local repository made of Debian bookworm's packaged Maven
# plugins (/usr/share/maven-repo inside the packages), for importing a Maven project with
# jdtls (m2e) where Maven Central cannot be reached.
#
# Usage: bash scripts/maven_debian_repo.sh DEST
#
# m2e's import of a `jar` project resolves the default lifecycle's plugins (clean, resources,
# compiler, surefire, jar, install) and, for resources and compiler, whose parameters it reads,
# their dependencies too. These packages hold them, with their parent POMs and the BOM
# plexus-compiler imports (junit5's). The packages are fetched through apt by name and pinned
# version (scripts/apt_download.sh) and unpacked with `dpkg -x` into DEST/root: no root
# install. Their jars are relative symlinks into /usr/share/java, which is unpacked beside.
# A project imported from it pins its plugins to these versions (fixtures/java/maven/pom.xml):
# clean 3.2.0, resources 3.3.0, compiler 3.10.1, surefire 2.22.3, jar 3.3.0, install 3.1.0.
# Writes DEST/settings.xml (offline, this local repository) and prints its path; a DEST that
# already has one is left as it is.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
dest=$1
settings="$dest/settings.xml"
if [ -f "$settings" ]; then echo "$settings"; exit 0; fi
packages=(
  libmaven-clean-plugin-java=3.2.0-2 libmaven-resources-plugin-java=3.3.0-1
  libmaven-compiler-plugin-java=3.10.1-2 libsurefire-java=2.22.3-2
  libmaven-jar-plugin-java=3.3.0-2 libmaven-install-plugin-java=3.1.0-1
  libmaven-parent-java=35-1 libapache-pom-java=29-2 libcommons-parent-java=56-1
  libmaven-filtering-java=3.3.0-1 libmaven-shared-utils-java=3.3.4-1
  libmaven-shared-incremental-java=1.1-3 libplexus-compiler-java=2.12.1-1
  libplexus-languages-java=1.1.1-2 libplexus-interpolation-java=1.26-1
  libplexus-component-annotations-java=2.1.1-1 libplexus-container-default-java=2.1.1-1
  libplexus-utils2-java=3.4.2-1 libplexus-build-api-java=0.0.7-4 libsisu-plexus-java=0.3.4-3
  libcommons-io-java=2.11.0-2 libcommons-lang-java=2.6-10+deb12u1
  libcommons-lang3-java=3.12.0-2+deb12u1 libatinject-jsr330-api-java=1.0+ds1-5
  libslf4j-java=1.7.32-1 libasm-java=9.4-1 libqdox2-java=2.0.3-1 junit5=5.9.2-1
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$(dirname "$0")
bash "$here/apt_download.sh" bookworm "$tmp/debs" "${packages[@]}" >/dev/null
mkdir -p "$dest/root"
for deb in "$tmp"/debs/*.deb; do dpkg -x "$deb" "$dest/root"; done
repo=$(cd "$dest/root/usr/share/maven-repo" && pwd)
cat >"$settings.part" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Made by scripts/maven_debian_repo.sh: Debian's packaged Maven plugins, offline. -->
<settings>
  <localRepository>$repo</localRepository>
  <offline>true</offline>
</settings>
EOF
mv "$settings.part" "$settings"
echo "$settings"
