#!/bin/sh
# libnbg and nbg link no OpenSSL, zlib or ISA-L (their DT_NEEDED entries,
# read with readelf, which reads any architecture's ELF) and hold no name
# of one to load at run time: SHA-256 is libnbg's own and CRC-32
# libdeflate's, or libnbg's own with -Dcrc32=portable, when libdeflate
# must not be needed either.
# Usage: check_needed.sh LIBNBG NBG CRC32_OPTION
set -eu
readelf=${READELF:-readelf}
forbidden='libcrypto|libssl|libz\.|libisal'
[ "$3" = portable ] && forbidden="$forbidden|libdeflate"
passed=0 failed=0
for f in "$1" "$2"; do
	if ! $readelf -h "$f" >/dev/null; then
		echo "$f: not an ELF file"
		failed=$((failed + 2))
		continue
	fi
	needed=$($readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	bad=$(printf '%s\n' "$needed" | grep -E "^($forbidden)" || true)
	if [ -n "$bad" ]; then
		echo "$f needs" $bad
		failed=$((failed + 1))
	else
		echo "$f needs:" $needed
		passed=$((passed + 1))
	fi
	if grep -qaE "($forbidden)[a-z0-9]*\.so" "$f"; then
		echo "$f names a library to load:" \
			"$(grep -aoE "($forbidden)[a-z0-9]*\.so[.0-9]*" "$f" | sort -u | tr '\n' ' ')"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
