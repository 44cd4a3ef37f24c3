"""The ELF kernel inside a bzImage, for scripts/vm-run (which boots it: an
uncompressed kernel starts twice as fast under TCG) and scripts/hook-audit
(which disassembles it).  Debian compresses with xz up to 6.x, zstd in 7.x.
Also: the arm64 Image inside an arm64 vmlinuz, and a kernel's symbols
decoded from its image's kallsyms tables (scripts/image-kallsyms)."""

import gzip
import lzma
import struct
import subprocess
import zlib

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


# The kernel's symbol table, from the kallsyms tables linked into its image
# (scripts/kallsyms of the kernel's source writes them; their layout moved
# between versions, their content did not):
#   kallsyms_num_syms    u32, the symbols' count
#   kallsyms_names       per symbol a length (one byte, or two when the
#                        first has bit 7 set: 6.1 on) then that many token
#                        numbers; the first character is the type letter
#   kallsyms_markers     u32 per 256 symbols: where its first name starts
#   kallsyms_token_table 256 NUL-terminated tokens
#   kallsyms_token_index 256 u16: where each token starts in the table
#   kallsyms_offsets     s32 per symbol, in the names' order (by address)
#   kallsyms_relative_base  u64, what the offsets count from (up to 6.x)
# 5.10 and 6.1 put the offsets and relative_base before num_syms (6.1 puts
# kallsyms_seqs_of_names between the markers and the tokens), 6.12 after
# the token index, 7.x too with no relative_base: an offset there counts
# from its own place.  x86-64 up to 6.x keeps its per-CPU symbols absolute
# (type A): an offset >= 0 is the address, a negative one counts down from
# relative_base - 1.  Every table is aligned to 4 (7.x) or 8 bytes.
KSYM_TYPES = b'aAbBdDgGnNrRsStTuUvVwW'


def _align(n, to):
    return -(-n // to) * to


def _tokens(data):
    """(table's offset, its 256 tokens, index's offset) of the token table
    in data, or None.  Every character that occurs in a symbol stays a token
    of its own, so the table holds the digits' tokens "0" to "9" in a row."""
    digits = b''.join(b'%c\0' % c for c in b'0123456789')
    pos = data.find(digits)
    while pos >= 0:
        end = pos
        for _ in range(0x30, 0x100):          # tokens 0x30 to 0xff
            nul = data.find(b'\0', end)
            if nul <= end:
                break
            end = nul + 1
        else:
            for align in (2, 4, 8):
                at = _align(end, align)
                index = struct.unpack_from('<256H', data, at)
                start = pos - index[0x30]
                if (index[0] == 0 and start >= 0 and
                        data.find(b'\0', start + index[255]) == end - 1 and
                        all(index[i] < index[i + 1] and
                            data.find(b'\0', start + index[i]) == start + index[i + 1] - 1
                            for i in range(255))):
                    return start, [data[start + i:data.find(b'\0', start + i)]
                                   for i in index], at
        pos = data.find(digits, pos + 1)
    return None


def _names(data, start, count, tokens, wide):
    """(names, end of the markers) of count names at start, if each begins
    with a type letter and the markers that follow them agree, else None.
    The names are joined once all else checks: a start part way into the
    real names walks them as well as the real start does."""
    typed = [t[:1] in KSYM_TYPES for t in tokens]
    at, first, pos = [], [], start
    for i in range(count):
        if not i % 256:
            first.append(pos - start)
        length = data[pos]
        pos += 1
        if wide and length & 0x80:
            length = length & 0x7f | data[pos] << 7
            pos += 1
        if not length or pos + length > len(data) or not typed[data[pos]]:
            return None
        at.append((pos, length))
        pos += length
    for align in (4, 8):
        end = _align(pos, align)
        if list(struct.unpack_from(f'<{len(first)}I', data, end)) == first:
            return ([b''.join(tokens[t] for t in data[p:p + n]) for p, n in at],
                    end + 4 * len(first))
    return None


def _sorted(addrs):
    return all(a <= b for a, b in zip(addrs, addrs[1:]))


def kallsyms(data, vaddr):
    """The symbols of the kernel image in data (a vmlinux or an arm64
    Image), as [(address, type, name)] by address, or None.  vaddr(offset):
    where data[offset] is linked.  The addresses are those the image holds:
    an arm64 Image's relative_base reads 0 (its relocations are applied at
    boot), for arm64_kallsyms() to place them."""
    found = _tokens(data)
    if found is None:
        return None
    table, tokens, index = found
    # num_syms is followed by the names, with markers agreeing with them.
    pos = table & ~3
    while pos > max(0, table - (64 << 20)):
        pos -= 4
        count, = struct.unpack_from('<I', data, pos)
        if not 256 < count < 1 << 24:
            continue
        for start in (pos + 4, pos + 8):
            got = _names(data, start, count, tokens, True) or \
                _names(data, start, count, tokens, False)
            if got:
                break
        else:
            continue
        break
    else:
        return None
    names = got[0]
    align = start - pos                         # the tables' alignment, 4 or 8
    # The offsets: before num_syms (relative_base between), or after the
    # token index (relative_base after, if any).  Read one slot off, they
    # would look as sorted: their place follows from the alignment alone.
    for at, base_at in ((pos - 8 - _align(4 * count, align), pos - 8),
                        (_align(index + 512, align), None)):
        if at < 0 or at + 4 * count + 8 > len(data):
            continue
        offs = struct.unpack_from(f'<{count}i', data, at)
        base, = struct.unpack_from('<Q', data, base_at or _align(at + 4 * count, align))
        if min(offs) < 0:
            addrs = [o if o >= 0 else base - 1 - o for o in offs]
        else:
            addrs = [base + o for o in offs]
        if not _sorted(addrs):
            addrs = [vaddr(at + 4 * i) + o for i, o in enumerate(offs)]
        if _sorted(addrs):
            return [(a, chr(n[0]), n[1:].decode('latin1')) for a, n in zip(addrs, names)]
    return None


def elf_vaddr(elf):
    """vaddr() for kallsyms(): where a byte of a 64-bit ELF file is loaded."""
    phoff, = struct.unpack_from('<Q', elf, 0x20)
    size, count = struct.unpack_from('<HH', elf, 0x36)
    loads = []
    for i in range(count):
        kind, _, offset, addr, _, filesz = struct.unpack_from('<IIQQQQ', elf, phoff + i * size)
        if kind == 1:                           # PT_LOAD
            loads.append((offset, addr, filesz))

    def vaddr(pos):
        return next(a + pos - o for o, a, n in loads if o <= pos < o + n)
    return vaddr


# arm64: Debian's vmlinuz is the kernel's raw Image (5.10 to 7.3), its
# header's magic at 0x38, its _text at offset 0.  The Image is disassembled
# as if linked at ARM64_TEXT: 6.12's and 7.x's _text (KIMAGE_VADDR, 48-bit
# virtual addresses); 5.10 links it at 0xffff800010000000, 6.1 at
# 0xffff800008000000 (their relocation tables say).  Only the distances
# from _text matter to the audit.
ARM64_MAGIC = b'ARM\x64'
ARM64_TEXT = 0xffff800080000000
GZIP_MAGIC = b'\x1f\x8b'
ARM64_HEADER_LEN = 64


def is_arm64_header(head):
    """Whether head, a kernel image's first ARM64_HEADER_LEN bytes (or
    more), is an arm64 Image's header (its magic at 0x38)."""
    return head[0x38:0x3c] == ARM64_MAGIC


def arm64_image(data):
    """The arm64 Image in data (itself, or gunzipped: an Image.gz), or None.
    An EFI zboot image (a compressed Image behind an EFI stub, 'zimg' at
    offset 4) is not read: Debian's are not."""
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return None
    return data if is_arm64_header(data) else None


def arm64_anchors(image):
    """{symbol: address} of the symbols that place an arm64 Image's code:
    _text at its start, and the code its header's second instruction
    branches to (b primary_entry, 5.8 on).  5.10's and 6.1's kallsyms have
    no _text (they begin at _stext, 64 KB on)."""
    insn, = struct.unpack_from('<I', image, 4)
    anchors = {'_text': ARM64_TEXT}
    if insn >> 26 == 0b000101:                  # b imm26
        imm = (insn & 0x3ffffff ^ 0x2000000) - 0x2000000
        anchors['primary_entry'] = ARM64_TEXT + 4 + 4 * imm
    return anchors


def anchor_shift(anchors, where):
    """What to add to the addresses of a kallsyms (where: {name: its first
    address}) to put the first of anchors ({name: address in the image})
    it holds where the image has it: KASLR or a link address undone.  None
    if it holds none of them."""
    name = next((n for n in anchors if n in where), None)
    return None if name is None else anchors[name] - where[name]


def arm64_kallsyms(image):
    """kallsyms() of an arm64 Image, placed so that _text is ARM64_TEXT."""
    syms = kallsyms(image, lambda pos: ARM64_TEXT + pos)
    if syms is None:
        return None
    where = {}
    for addr, _, name in syms:
        where.setdefault(name, addr)
    anchors = arm64_anchors(image)
    shift = anchor_shift(anchors, where)
    if shift is None:
        return None
    syms = [(a + shift, t, n) for a, t, n in syms]
    # Both anchors, where both are there, must agree.
    if any(where[n] + shift != a for n, a in anchors.items() if n in where):
        return None
    return syms
