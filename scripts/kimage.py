"""The ELF kernel inside a bzImage, for scripts/vm-run (which boots it: an
uncompressed kernel starts twice as fast under TCG) and scripts/hook-audit
(which disassembles it).  Debian compresses with xz up to 6.x, zstd in 7.x."""

import lzma
import subprocess

XZ_MAGIC = b'\xfd7zXZ\x00'
ZSTD_MAGIC = b'\x28\xb5\x2f\xfd'


def _xz(data):
    dec = lzma.LZMADecompressor(lzma.FORMAT_XZ)
    try:
        return dec.decompress(data)  # stops at the stream end, trailing data ignored
    except lzma.LZMAError:
        return b''


def _zstd(data):
    try:
        r = subprocess.run(['zstd', '-dcq'], input=data, capture_output=True,
                           check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return b''
    return r.stdout  # zstd complains about trailing data, yet writes the frame


def vmlinux(data):
    """The ELF image inside bzImage bytes, or None."""
    for magic, unpack in ((XZ_MAGIC, _xz), (ZSTD_MAGIC, _zstd)):
        pos = data.find(magic)
        while pos >= 0:
            elf = unpack(data[pos:])
            if elf[:4] == b'\x7fELF':
                return elf
            pos = data.find(magic, pos + 1)
    return None
