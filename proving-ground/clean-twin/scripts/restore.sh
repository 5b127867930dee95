#!/bin/sh
# restore.sh -- put the notes of a backup archive back.
#
# usage: restore.sh ARCHIVE
set -u
archive=${1:?usage: restore.sh ARCHIVE}
dest=${NOTES_DIR:-$HOME/.notes}

case $archive in
/*) ;;
*) archive=$PWD/$archive ;;
esac
mkdir -p "$dest"
cd "$dest" || exit 1
tar -xf "$archive" notes.txt
