#include "symbol_version.h"

#include <cstring>
#include <elf.h>

namespace tuneup::agent {

namespace {

// The loader relocates the dynamic section's addresses in place where it can (x86-64); where the
// section is read-only they stay link-time addresses, smaller than any load address.
uintptr_t address(const link_map* object, ElfW(Addr) value) {
    return value < object->l_addr ? object->l_addr + value : value;
}

struct Tables {
    const char* strings = nullptr;
    const ElfW(Sym) * symbols = nullptr;
    const ElfW(Half) * versions = nullptr; // .gnu.version: one per symbol
    const ElfW(Verneed) * needed = nullptr; // .gnu.version_r
    size_t neededCount = 0;
    size_t undefinedEnd = 0; // undefined symbols come before this index
};

Tables tables(const link_map* object) {
    Tables t;
    const uint32_t *gnuHash = nullptr, *hash = nullptr;
    for (const ElfW(Dyn)* d = object->l_ld; d && d->d_tag != DT_NULL; ++d) {
        switch (d->d_tag) {
        case DT_STRTAB:
            t.strings = reinterpret_cast<const char*>(address(object, d->d_un.d_ptr));
            break;
        case DT_SYMTAB:
            t.symbols = reinterpret_cast<const ElfW(Sym)*>(address(object, d->d_un.d_ptr));
            break;
        case DT_VERSYM:
            t.versions = reinterpret_cast<const ElfW(Half)*>(address(object, d->d_un.d_ptr));
            break;
        case DT_VERNEED:
            t.needed = reinterpret_cast<const ElfW(Verneed)*>(address(object, d->d_un.d_ptr));
            break;
        case DT_VERNEEDNUM:
            t.neededCount = d->d_un.d_val;
            break;
        case DT_GNU_HASH:
            gnuHash = reinterpret_cast<const uint32_t*>(address(object, d->d_un.d_ptr));
            break;
        case DT_HASH:
            hash = reinterpret_cast<const uint32_t*>(address(object, d->d_un.d_ptr));
            break;
        default:
            break;
        }
    }
    // The GNU hash table holds the defined symbols, last in the table: the undefined ones come before
    // its first (symoffset). The SysV table counts every symbol (nchain).
    if (gnuHash)
        t.undefinedEnd = gnuHash[1];
    else if (hash)
        t.undefinedEnd = hash[1];
    return t;
}

} // namespace

std::string versionNeeded(const link_map* object, const char* symbol) {
    if (!object || !symbol) return {};
    const Tables t = tables(object);
    if (!t.strings || !t.symbols || !t.versions || !t.needed || t.undefinedEnd > (size_t(1) << 24)) return {};
    for (size_t i = 1; i < t.undefinedEnd; ++i) {
        const ElfW(Sym)& s = t.symbols[i];
        if (s.st_shndx != SHN_UNDEF || strcmp(t.strings + s.st_name, symbol) != 0) continue;
        const ElfW(Half) index = t.versions[i] & 0x7fff; // the top bit marks a hidden version
        if (index < 2) return {}; // 0 local, 1 global: no version asked
        const auto* need = t.needed;
        for (size_t n = 0; n < t.neededCount; ++n) {
            const auto* aux
                = reinterpret_cast<const ElfW(Vernaux)*>(reinterpret_cast<const char*>(need) + need->vn_aux);
            for (ElfW(Half) a = 0; a < need->vn_cnt; ++a) {
                if (aux->vna_other == index) return t.strings + aux->vna_name;
                aux = reinterpret_cast<const ElfW(Vernaux)*>(reinterpret_cast<const char*>(aux) + aux->vna_next);
            }
            if (!need->vn_next) break;
            need = reinterpret_cast<const ElfW(Verneed)*>(reinterpret_cast<const char*>(need) + need->vn_next);
        }
        return {};
    }
    return {};
}

} // namespace tuneup::agent
