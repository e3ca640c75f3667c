#include "import/json_window_splitter.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tuneup::analysis {

JsonArraySplitter::Result JsonArraySplitter::scanBytes(const char* text, size_t size, Cut cut) {
    for (size_t i = 0; i < size; ++i) {
        const char c = text[i];
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t') m_control = true;
        // A backslash escapes the next byte wherever it is, as in scan() (outside a string it is an
        // error that the parser reports; only the two scanners need to agree).
        if (m_escaped) {
            m_escaped = false;
            continue;
        }
        if (c == '\\') {
            m_escaped = m_backslash = true;
            continue;
        }
        if (m_inString) {
            m_inString = c != '"';
            continue;
        }
        switch (c) {
        case '"':
            m_inString = true;
            break;
        case '{':
        case '[':
            m_maxDepth = std::max(m_maxDepth, ++m_depth);
            break;
        case '}':
        case ']':
            if (m_depth == 0) return { i, Stop::ArrayEnd };
            if (--m_depth == 0 && cut != Cut::None) return { i + 1, Stop::AfterElement };
            break;
        case ',':
            if (m_depth == 0 && cut == Cut::AfterElementOrComma) return { i + 1, Stop::AfterComma };
            break;
        default:
            break;
        }
    }
    return { size, Stop::More };
}

#if defined(__SSE2__)

namespace {

// Bit i set where byte i of the 64 is a quote, a backslash, an opening or a closing bracket, or a
// control byte other than whitespace.
struct Masks {
    uint64_t quote, backslash, open, close, control;
};

inline uint64_t bits16(__m128i eq) {
    return static_cast<uint16_t>(_mm_movemask_epi8(eq));
}

inline Masks classify(const char* p) {
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    // '[' and '{' differ only in bit 0x20, as do ']' and '}': one compare finds both.
    const __m128i case20 = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
    const __m128i x1f = _mm_set1_epi8(0x1f), lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
                  tab = _mm_set1_epi8('\t');
    Masks m { 0, 0, 0, 0, 0 };
    for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
        const __m128i folded = _mm_or_si128(v, case20);
        const __m128i below20 = _mm_cmpeq_epi8(_mm_max_epu8(v, x1f), x1f);
        const __m128i space
            = _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
        const int shift = 16 * k;
        m.quote |= bits16(_mm_cmpeq_epi8(v, quote)) << shift;
        m.backslash |= bits16(_mm_cmpeq_epi8(v, backslash)) << shift;
        m.open |= bits16(_mm_cmpeq_epi8(folded, open)) << shift;
        m.close |= bits16(_mm_cmpeq_epi8(folded, close)) << shift;
        m.control |= bits16(_mm_andnot_si128(space, below20)) << shift;
    }
    return m;
}

// Set bits, without the libgcc call __builtin_popcountll becomes where POPCNT is not baseline.
inline int bitCount(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<int>((x * 0x0101010101010101ull) >> 56);
}

// Bit i = xor of bits 0..i: 1 from an opening quote up to (not including) its closing quote.
inline uint64_t prefixXor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

} // namespace

JsonArraySplitter::Result JsonArraySplitter::scan(const char* text, size_t size, Cut cut) {
    if (cut == Cut::AfterElementOrComma)
        return scanBytes(text, size, cut); // only for arrays of scalars, past a window's size limit
    size_t pos = 0;
    for (; pos + 64 <= size; pos += 64) {
        const Masks m = classify(text + pos);
        // Bytes escaped by a backslash: rare in traces, so a loop over the backslashes is enough.
        uint64_t escaped = 0;
        bool carry = false;
        m_backslash |= m.backslash != 0; // the whole block, even past a stop: a bound is enough
        m_control |= m.control != 0;
        if (m.backslash != 0 || m_escaped) {
            uint64_t starters = m.backslash;
            if (m_escaped) {
                escaped = 1;
                starters &= ~uint64_t(1);
            }
            while (starters != 0) {
                const int i = __builtin_ctzll(starters);
                if (i == 63) {
                    carry = true;
                    break;
                }
                escaped |= uint64_t(2) << i;
                starters &= ~(uint64_t(3) << i); // the escaped byte starts no escape, even a backslash
            }
        }
        const uint64_t inString = prefixXor(m.quote & ~escaped) ^ (m_inString ? ~uint64_t(0) : 0);
        const uint64_t open = m.open & ~escaped & ~inString;
        const uint64_t close = m.close & ~escaped & ~inString;
        m_inString = inString >> 63;
        m_escaped = carry;
        if (open == 0 && close == 0) continue;
        const int opens = bitCount(open), closes = bitCount(close);
        if (m_depth > closes) { // depth stays above 0 in this block: no element ends here
            m_maxDepth = std::max(m_maxDepth, m_depth + opens); // a bound: closes may come first
            m_depth += opens - closes;
            continue;
        }
        for (uint64_t brackets = open | close; brackets != 0; brackets &= brackets - 1) {
            const int i = __builtin_ctzll(brackets);
            if ((open >> i) & 1) {
                m_maxDepth = std::max(m_maxDepth, ++m_depth);
                continue;
            }
            // A bracket is outside strings and not escaped: stopping here leaves both flags false.
            if (m_depth == 0) {
                m_inString = m_escaped = false;
                return { pos + static_cast<size_t>(i), Stop::ArrayEnd };
            }
            if (--m_depth == 0 && cut != Cut::None) {
                m_inString = m_escaped = false;
                return { pos + static_cast<size_t>(i) + 1, Stop::AfterElement };
            }
        }
    }
    Result tail = scanBytes(text + pos, size - pos, cut);
    tail.used += pos;
    return tail;
}

#else

JsonArraySplitter::Result JsonArraySplitter::scan(const char* text, size_t size, Cut cut) {
    return scanBytes(text, size, cut);
}

#endif

} // namespace tuneup::analysis
