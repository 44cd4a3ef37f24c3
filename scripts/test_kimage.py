#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of kimage.py's kallsyms decoder and arm64 Image reading, on kernel
images they craft: the kallsyms tables in each layout scripts/kallsyms has
written (5.10 and 6.1's, 6.12's, 7.x's; x86-64's absolute per-CPU
symbols), among bytes that look like them in part.

    python3 scripts/test_kimage.py [-v]

The decoder was checked on Debian's images too: on the five x86-64
kernels it gives the symbols an independent decoder gave, byte for byte;
on the four arm64 Images _text, primary_entry and _end lie where their
headers say (docs/kernels.md, "The hook audit").
"""

import gzip
import os
import struct
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kimage  # noqa: E402

LINK = 0xffffffff81000000


def symbols(count=700):
    """(address, type, name) by address, as scripts/kallsyms sorts them:
    aliases share an address, as _text and _stext do on x86-64."""
    syms = [(LINK, 'T', '_text'), (LINK, 'T', '_stext')]
    addr = LINK + 0x40
    for i in range(count - 3):
        syms.append((addr, 'tT'[i % 2], f'tcp_fn_{i:04d}_{"x" * (i % 40)}'))
        addr += 0x20 + (i % 7) * 0x10
    syms.append((addr, 'T', '_etext'))
    return syms


def tokens(syms):
    """256 tokens: each character the names use, the rest pairs of them."""
    chars = sorted({c for _, t, n in syms for c in t + n})
    table = [None] * 256
    for c in chars:
        table[ord(c)] = c.encode()
    pairs = (a + b for a in chars for b in chars)
    for i in range(256):
        if table[i] is None:
            table[i] = next(pairs).encode()
    return table


def compress(text, table):
    """Greedy: a pair's token where there is one, as good as the real one here."""
    code = {t: i for i, t in enumerate(table)}
    out, pos = [], 0
    while pos < len(text):
        n = 2 if text[pos:pos + 2] in code else 1
        out.append(code[text[pos:pos + n]])
        pos += n
    return bytes(out)


def pad(blob, to):
    blob += b'\0' * (-len(blob) % to)
    return blob


def tables(syms, layout, align=8, percpu=(), offset=0x40000):
    """The kallsyms tables of syms (and of percpu: (address, name) absolute
    symbols first), in layout 'old' (5.10; 'old-seqs' 6.1), 'new' (6.12) or
    'place' (7.x), as they lie at offset in an image linked at LINK."""
    allsyms = [(a, 'A', n) for a, n in percpu] + syms
    table = tokens(allsyms)
    names, markers = b'', []
    for i, (_, t, n) in enumerate(allsyms):
        if not i % 256:
            markers.append(len(names))
        code = compress((t + n).encode(), table)
        if len(code) < 0x80:
            names += bytes([len(code)]) + code
        else:
            names += bytes([len(code) & 0x7f | 0x80, len(code) >> 7]) + code
    base = min(a for a, t, _ in allsyms if t != 'A')

    def offsets(at):
        out = b''
        for i, (a, t, _) in enumerate(allsyms):
            if layout == 'place':
                out += struct.pack('<i', a - (LINK + offset + at + 4 * i))
            elif percpu:
                out += struct.pack('<i', a if t == 'A' else base - 1 - a)
            else:
                out += struct.pack('<I', a - base)
        return out

    index, tok = [], b''
    for t in table:
        index.append(len(tok))
        tok += t + b'\0'
    head = pad(struct.pack('<I', len(allsyms)), align) + pad(names, align)
    head += pad(b''.join(struct.pack('<I', m) for m in markers), align)
    if layout == 'old-seqs':
        head += pad(b'\x01\x02\x03' * len(allsyms), align)
    head += pad(tok, align) + pad(struct.pack('<256H', *index), align)
    if layout.startswith('old'):
        lead = pad(offsets(0), 8) + struct.pack('<Q', base)
        return pad(lead, align) + head
    blob = head + pad(offsets(len(head)), 8)
    if layout == 'new':
        blob += struct.pack('<Q', base)
    return blob + b'\x05\x06\x07' * len(allsyms)


def image(blob, offset=0x40000):
    """blob at offset, after bytes like the tables' in part: the digits'
    tokens, a count and names that lead nowhere."""
    junk = b'\0\x07' + b''.join(b'%c\0' % c for c in b'0123456789') * 3
    junk += struct.pack('<I', 300) + b'\x03T_t\x02tc' * 50
    data = bytearray(os.urandom(offset))
    data[0x1000:0x1000 + len(junk)] = junk
    return bytes(data) + blob + os.urandom(0x1000)


def vaddr(pos):
    return LINK + pos


class Kallsyms(unittest.TestCase):
    def check(self, layout, align=8, percpu=()):
        # Counts that leave the tables' ends at each offset modulo 8.
        for count in range(700, 708):
            syms = symbols(count)
            got = kimage.kallsyms(image(tables(syms, layout, align, percpu)), vaddr)
            want = [(a, 'A', n) for a, n in percpu] + syms
            self.assertEqual(got, want, f'{count} symbols')

    def test_5_10(self):
        self.check('old')

    def test_6_1_seqs_of_names(self):
        self.check('old-seqs')

    def test_6_12(self):
        self.check('new')

    def test_7_x_place_relative(self):
        self.check('place', align=4)

    def test_x86_64_absolute_percpu(self):
        self.check('old', percpu=[(0, 'fixed_percpu_data'), (0x1000, 'cpu_debug_store')])
        self.check('new', percpu=[(0, 'fixed_percpu_data'), (0x1000, 'cpu_debug_store')])

    def test_long_names(self):
        # 6.1 on: a name longer than 127 tokens takes two length bytes.
        syms = symbols()
        syms[5] = (syms[5][0], 't', 'y' * 300)
        got = kimage.kallsyms(image(tables(syms, 'new')), vaddr)
        self.assertEqual(got, syms)

    def test_none(self):
        self.assertIsNone(kimage.kallsyms(image(b''), vaddr))


def arm64_header(entry):
    """An arm64 Image header whose second instruction is b entry."""
    head = bytearray(0x40)
    struct.pack_into('<II', head, 0, 0x91005a4d, 0x14000000 | ((entry - 4) >> 2))
    head[0x38:0x3c] = kimage.ARM64_MAGIC
    return bytes(head)


class Arm64(unittest.TestCase):
    def test_image(self):
        data = arm64_header(0x1280000) + b'\0' * 64
        self.assertEqual(kimage.arm64_image(data), data)
        self.assertEqual(kimage.arm64_image(gzip.compress(data)), data)
        self.assertIsNone(kimage.arm64_image(b'MZ' + b'\0' * 100))

    def test_anchors(self):
        self.assertEqual(kimage.arm64_anchors(arm64_header(0x1280000)),
                         {'_text': kimage.ARM64_TEXT,
                          'primary_entry': kimage.ARM64_TEXT + 0x1280000})

    def test_kallsyms_without_text(self):
        # 5.10 and 6.1: no _text in kallsyms, relative_base is _stext
        # (64 KB on) and reads 0 in the Image (applied at boot).
        entry = 0x20000
        syms = [(0x10000, 'T', '_stext')] + [
            (0x10000 + 0x40 * i, 't', f'fn_{i:03d}') for i in range(1, 400)] + [
            (entry, 'T', 'primary_entry')]
        blob = tables([(LINK + a, t, n) for a, t, n in syms], 'old')
        # relative_base as an arm64 Image holds it: not yet relocated.
        at = blob.index(struct.pack('<Q', LINK + 0x10000))
        blob = blob[:at] + bytes(8) + blob[at + 8:]
        data = image(blob, 0x30000)
        data = arm64_header(entry) + data[0x40:]
        got = kimage.arm64_kallsyms(data)
        self.assertEqual(got, [(kimage.ARM64_TEXT + a, t, n) for a, t, n in syms])


if __name__ == '__main__':
    unittest.main()
