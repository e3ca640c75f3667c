"""The GPU bundle's files: where they are, what a binary needs from the machine (ELF), the manifest."""

import hashlib
import json
import os
import struct
import time


BUNDLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(BUNDLE, "driver")
TUNEUP = os.path.join(BUNDLE, "bin", "tuneup")
AGENT = os.path.join(BUNDLE, "lib", "libtuneup-agent.so")
CUDA_CHECK = os.path.join(BUNDLE, "bin", "cuda_check")
SAMPLES_DIR = os.path.join(BUNDLE, "samples", "python")
MANIFEST = "MANIFEST.json"
FIXTURES_LIMIT = 15 << 20  # the device tool brings back files of at most 16 MiB
CUPTI_DUMP_MB = 4  # raw CUPTI buffers of the capture workload; mostly zeros, they compress well

# Libraries a self-contained bundle binary may need: glibc's own.
GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2",
                   "ld-linux-aarch64.so.1"}


# --- ELF: what a binary needs from the machine -------------------------------------------------------------

def elf_needs(path):
    """The shared libraries (DT_NEEDED) and glibc symbol versions (GLIBC_x.y) an ELF64 file needs.
    Returns dict(static=bool, needed=[...], glibc=[(2, 34), ...]); raises ValueError on a file that
    is not ELF64 little-endian."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("%s is not a 64-bit little-endian ELF file" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = []
    for i in range(shnum):
        _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append((kind, offset, size, link, entsize))

    def string(table, at):
        _, offset, size, _, _ = sections[table]
        end = data.index(b"\0", offset + at)
        return data[offset + at:end].decode()

    needed, versions, dynamic = [], set(), False
    for kind, offset, size, link, _ in sections:
        if kind == 6:  # SHT_DYNAMIC
            dynamic = True
            for at in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == 0:
                    break
                if tag == 1:  # DT_NEEDED
                    needed.append(string(link, value))
        elif kind == 0x6FFFFFFE:  # SHT_GNU_verneed
            at = offset
            while True:
                _version, count, _file, aux, nxt = struct.unpack_from("<HHIII", data, at)
                a = at + aux
                for _ in range(count):
                    _hash, _flags, _other, name, anext = struct.unpack_from("<IHHII", data, a)
                    text = string(link, name)
                    if text.startswith("GLIBC_") and text[6:].replace(".", "").isdigit():
                        versions.add(tuple(int(p) for p in text[6:].split(".")))
                    a += anext
                if not nxt:
                    break
                at += nxt
    return dict(static=not dynamic, needed=needed, glibc=sorted(versions))


def glibc_text(version):
    return ".".join(str(p) for p in version) if version else "none"


def machine_glibc():
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
        return tuple(int(p) for p in version.split(".")[:2]) if name == "glibc" else None
    except (ValueError, OSError, AttributeError):
        return None


# --- The bundle's manifest (written by scripts/gpu-bundle.sh through --write-manifest) ---------------------

def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(root, version, commit):
    files, binaries = {}, {}
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if relative == MANIFEST or "__pycache__" in relative:
                continue
            files[relative] = dict(bytes=os.path.getsize(path), sha256=sha256(path))
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    info = elf_needs(path)
                    foreign = [n for n in info["needed"] if n not in GLIBC_LIBRARIES]
                    if foreign:
                        raise SystemExit("gpu-bundle: %s needs %s, which a machine with only glibc lacks: it must be "
                                         "linked statically (tuneup-static) or carry them" % (relative, ", ".join(foreign)))
                    binaries[relative] = dict(static=info["static"], needed=info["needed"],
                                              glibc=glibc_text(info["glibc"][-1] if info["glibc"] else None))
    manifest = dict(tuneup_version=version, git_commit=commit, built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    built_with_glibc=glibc_text(machine_glibc()), bytes=sum(f["bytes"] for f in files.values()),
                    binaries=binaries, files=files)
    with open(os.path.join(root, MANIFEST), "w") as out:
        json.dump(manifest, out, indent=1, sort_keys=True)
    return manifest
