#!/usr/bin/env python3
"""Extracts the TABLE_MAP column types/metadata and the row images of the rows events of one database from
a binlog file, into one text file per table (the format tests/unit/mysql_row_decoder_test.cpp reads).

Usage: capture_rows.py BINLOG_FILE DATABASE OUT_DIR [START_POS]

Each output file <table>.rows.txt holds:
  table DB.TABLE
  types T1 T2 ...      column type codes (enum_field_types) as TABLE_MAP logs them
  meta M1 M2 ...       metadata as ColumnDef::meta documents it (VARCHAR: max bytes; NEWDECIMAL: precision<<8|scale;
                       BIT: bytes<<8|bits; STRING/ENUM/SET: the raw two bytes, real_type<<8|length)
  nullable N1 N2 ...
  then per rows event: `event TYPE COLUMNS BEFORE_BITMAP_HEX AFTER_BITMAP_HEX(or -)` and `rows HEX`.
Checksums (CRC32) are assumed on and stripped.
"""
import struct, sys

def packed(b, i):
    f = b[i]
    if f < 0xfb: return f, i + 1
    if f == 0xfc: return int.from_bytes(b[i+1:i+3], 'little'), i + 3
    if f == 0xfd: return int.from_bytes(b[i+1:i+4], 'little'), i + 4
    return int.from_bytes(b[i+1:i+9], 'little'), i + 9

ONE = {4, 5, 249, 250, 251, 252, 255, 245, 17, 18, 19}
TWO = {15, 253, 16, 246, 254, 247, 248}

def main():
    path, db, out_dir = sys.argv[1:4]
    start = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    data = open(path, 'rb').read()
    pos = start
    maps, files = {}, {}
    while pos + 19 <= len(data):
        ts, typ, sid, size, nxt, flags = struct.unpack_from('<IBIIIH', data, pos)
        ev = data[pos:pos + size]
        body = ev[19:-4]
        pos += size
        if typ == 19:
            tid = int.from_bytes(body[0:6], 'little')
            i = 8
            dl = body[i]; dbn = body[i+1:i+1+dl].decode(); i += 2 + dl
            tl = body[i]; tbn = body[i+1:i+1+tl].decode(); i += 2 + tl
            n, i = packed(body, i)
            types = list(body[i:i+n]); i += n
            ml, i = packed(body, i)
            m = body[i:i+ml]; i += ml
            nulls = body[i:i+(n+7)//8]
            metas, j = [], 0
            for t in types:
                if t in ONE: metas.append(m[j]); j += 1
                elif t in (15, 253, 16): metas.append(m[j] | m[j+1] << 8); j += 2
                elif t in TWO: metas.append(m[j] << 8 | m[j+1]); j += 2
                else: metas.append(0)
            nullable = [(nulls[k // 8] >> (k % 8)) & 1 for k in range(n)]
            maps[tid] = (dbn, tbn, types, metas, nullable)
        elif typ in (23, 24, 25, 30, 31, 32) and body:
            tid = int.from_bytes(body[0:6], 'little')
            if tid not in maps or maps[tid][0] != db: continue
            dbn, tbn, types, metas, nullable = maps[tid]
            i = 8
            if typ >= 30:
                el = int.from_bytes(body[8:10], 'little'); i = 8 + el
            n, i = packed(body, i)
            bl = (n + 7) // 8
            before = body[i:i+bl]; i += bl
            after = b''
            if typ in (24, 31):
                after = body[i:i+bl]; i += bl
            if tbn not in files:
                f = open(f'{out_dir}/{tbn}.rows.txt', 'w')
                f.write(f'# captured from MariaDB 10.11 by tests/data/mysql/capture_rows.py (see README.md)\n')
                f.write(f'table {dbn}.{tbn}\n')
                f.write('types ' + ' '.join(map(str, types)) + '\n')
                f.write('meta ' + ' '.join(map(str, metas)) + '\n')
                f.write('nullable ' + ' '.join(map(str, nullable)) + '\n')
                files[tbn] = f
            files[tbn].write(f'event {typ} {n} {before.hex()} {after.hex() or "-"}\n')
            files[tbn].write(f'rows {body[i:].hex()}\n')
    for f in files.values(): f.close()

main()
