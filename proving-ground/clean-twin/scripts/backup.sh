#!/bin/sh
# backup.sh -- copy the notes into a dated tar archive; print its name.
#
# usage: backup.sh DESTDIR
set -u
src=${NOTES_DIR:-$HOME/.notes}
dest=${1:?usage: backup.sh DESTDIR}
archive=$dest/notes-$(date +%Y%m%d).tar

mkdir -p "$dest"
cd "$src" || exit 1
tar -cf "$archive" notes.txt
echo "$archive"
