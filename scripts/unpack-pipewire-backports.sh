#!/usr/bin/env bash
# Unpacks the PipeWire of this Debian release's backports suite (1.4 for
# bookworm) into FOLDER/root, beside the system's PipeWire, which stays as
# it is: the PipeWire lane runs once on each. The archive is the one the
# machine's own apt sources name; apt's state for it lives in FOLDER, so the
# system's package lists are not touched. Idempotent.
set -euo pipefail
folder=$(realpath -m "${1:?usage: unpack-pipewire-backports.sh FOLDER}")
[ -x "$folder/root/usr/bin/pipewire" ] && exit 0
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
# The first Debian archive the machine's sources name (deb822 or one-line form).
archive=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$archive" ] || archive=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$archive" ] || { echo "unpack-pipewire-backports: no Debian archive in /etc/apt/sources.list*" >&2; exit 1; }
mkdir -p "$folder/apt/lists/partial" "$folder/apt/cache/archives/partial" "$folder/debs" "$folder/root"
echo "deb $archive $codename-backports main" > "$folder/sources.list"
apt=(-o "Dir::Etc::SourceList=$folder/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o "Dir::State::Lists=$folder/apt/lists" -o "Dir::Cache=$folder/apt/cache" -o APT::Sandbox::User=root)
apt-get -qq "${apt[@]}" update
packages=(pipewire pipewire-bin pipewire-jack libpipewire-0.3-0 libpipewire-0.3-common libpipewire-0.3-modules libspa-0.2-modules)
(cd "$folder/debs" && apt-get -qq "${apt[@]}" download "${packages[@]/%//$codename-backports}")
for deb in "$folder"/debs/*.deb; do dpkg -x "$deb" "$folder/root"; done
lib=$(dirname "$(ls "$folder"/root/usr/lib/*/libpipewire-0.3.so.0 | head -n 1)")
echo "unpack-pipewire-backports: $(LD_LIBRARY_PATH=$lib "$folder/root/usr/bin/pipewire" --version | tail -n 1) in $folder/root"
