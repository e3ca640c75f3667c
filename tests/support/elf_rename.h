#pragma once
// A copy of a real shared library under another major version, for tests of processes that load two
// copies of one library (a toolkit's libcublas.so.13 beside a wheel's libcublas.so.12): only one CUDA
// toolkit is installed here, so the other copy is made from it. The copy's soname and its symbol
// version ("libcublas.so.13" -> "libcublas.so.12", the same length) are renamed in .dynstr, and the
// version definition's hash is recomputed; the code is the real library's, byte for byte.

#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tuneup::test {

// The System V hash the loader compares version names by (vd_hash).
inline uint32_t elfHash(const char* name) {
    uint32_t h = 0;
    for (auto p = reinterpret_cast<const unsigned char*>(name); *p; ++p) {
        h = (h << 4) + *p;
        const uint32_t g = h & 0xf0000000u;
        if (g) h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

// Writes `to` as `from` with every "oldName" in its dynamic string table renamed `newName`. Returns ""
// on success, else what went wrong.
inline std::string copyLibraryRenamed(
    const std::string& from, const std::string& to, const std::string& oldName, const std::string& newName) {
    if (oldName.size() != newName.size()) return "the names must have the same length";
    std::ifstream in(from, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < sizeof(Elf64_Ehdr) || memcmp(bytes.data(), ELFMAG, SELFMAG) != 0
        || bytes[EI_CLASS] != ELFCLASS64)
        return from + " is not a 64-bit ELF file";
    auto* base = bytes.data();
    const auto* header = reinterpret_cast<const Elf64_Ehdr*>(base);
    const auto* sections = reinterpret_cast<const Elf64_Shdr*>(base + header->e_shoff);
    const Elf64_Shdr *dynstr = nullptr, *verdef = nullptr;
    for (int i = 0; i < header->e_shnum; ++i) {
        if (sections[i].sh_type == SHT_DYNAMIC) dynstr = &sections[sections[i].sh_link];
        if (sections[i].sh_type == SHT_GNU_verdef) verdef = &sections[i];
    }
    if (!dynstr) return from + " has no dynamic section";
    char* strings = base + dynstr->sh_offset;
    int renamed = 0;
    const std::string needle = oldName + '\0';
    for (size_t at = 0; at + needle.size() <= dynstr->sh_size; ++at)
        if (memcmp(strings + at, needle.data(), needle.size()) == 0) {
            memcpy(strings + at, newName.data(), newName.size());
            ++renamed;
        }
    if (!renamed) return from + " has no string " + oldName;
    for (size_t at = verdef ? verdef->sh_offset : 0; verdef;) {
        auto* definition = reinterpret_cast<Elf64_Verdef*>(base + at);
        const auto* aux = reinterpret_cast<const Elf64_Verdaux*>(base + at + definition->vd_aux);
        if (newName == strings + aux->vda_name) definition->vd_hash = elfHash(newName.c_str());
        if (!definition->vd_next) break;
        at += definition->vd_next;
    }
    std::ofstream out(to, std::ios::binary | std::ios::trunc);
    out.write(base, std::streamsize(bytes.size()));
    return out ? "" : "cannot write " + to;
}

} // namespace tuneup::test
