#!/bin/sh
# SPDX-License-Identifier: MIT
# The library as a user gets it: meson install into a temporary root, a docs
# example built there with nothing but `pkg-config --cflags --libs morok-1.0`
# (no path into the source tree), run against the installed
# libmorok-1.0.so.0, printing what the in-tree build of the same example
# prints; and gst-inspect-1.0 finds the installed plugin's elements.
#
#   installed-library.sh MESON BUILD_ROOT CC EXAMPLE.c IN_TREE_EXAMPLE [SANITIZE]
#
# SANITIZE: the build's -fsanitize=... (a sanitized build), for the example's
# link; gst-inspect-1.0, not instrumented, then loads the plugin with the
# AddressSanitizer runtime preloaded (its leaks are the element tests' job).
set -eu
meson=$1 build=$2 cc=$3 example=$4 in_tree=$5 sanitize=${6:-}

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
"$meson" install -C "$build" --no-rebuild --quiet --destdir "$root" >/dev/null

pc=$(find "$root" -name morok-1.0.pc)
[ -n "$pc" ] || { echo "no morok-1.0.pc installed under $root" >&2; exit 1; }
# The .pc file as it would read installed at the temporary root (only its
# own prefix moves; GLib's stays where it is)
mkdir "$root/pkgconfig"
sed "s|^prefix=|prefix=$root|" "$pc" >"$root/pkgconfig/morok-1.0.pc"
export PKG_CONFIG_PATH="$root/pkgconfig"
flags=$(pkg-config --cflags --libs morok-1.0)
echo "pkg-config --cflags --libs morok-1.0: $flags"
libdir=$(pkg-config --variable=libdir morok-1.0)

# shellcheck disable=SC2086 # pkg-config's flags are meant to split
"$cc" -std=c11 -D_GNU_SOURCE $sanitize -o "$root/example" "$example" $flags -lm
preload=
case $sanitize in *address*) preload=$("$cc" -print-file-name=libasan.so) ;; esac

soname=$(objdump -p "$libdir/libmorok-1.0.so" | sed -n 's/^ *SONAME *//p')
[ "$soname" = libmorok-1.0.so.0 ] || { echo "soname '$soname', expected libmorok-1.0.so.0" >&2; exit 1; }
LD_LIBRARY_PATH=$libdir ldd "$root/example" | grep -q "$libdir/libmorok-1.0.so.0" ||
  { echo "the example does not load the installed library" >&2; exit 1; }

LD_LIBRARY_PATH=$libdir "$root/example" >"$root/installed.out"
"$in_tree" >"$root/in-tree.out"
if ! cmp -s "$root/installed.out" "$root/in-tree.out"; then
  echo "the installed build prints something else:" >&2
  diff "$root/in-tree.out" "$root/installed.out" >&2
  exit 1
fi
echo "installed example: $(wc -l <"$root/installed.out") lines, as in the build tree"

plugin=$(find "$root" -name libgstmorok.so)
[ "${plugin%/*}" = "$libdir/gstreamer-1.0" ] ||
  { echo "plugin installed at '$plugin', expected $libdir/gstreamer-1.0" >&2; exit 1; }
for element in morokvad morokencoder moroktranscriber; do
  LD_PRELOAD=$preload ASAN_OPTIONS=${preload:+detect_leaks=0} \
    LD_LIBRARY_PATH=$libdir GST_PLUGIN_SYSTEM_PATH="${plugin%/*}" GST_PLUGIN_PATH= \
    GST_REGISTRY="$root/registry.bin" gst-inspect-1.0 "$element" >/dev/null ||
    { echo "gst-inspect-1.0 does not find the installed $element" >&2; exit 1; }
done
echo "installed plugin: $plugin has morokvad, morokencoder, moroktranscriber"
