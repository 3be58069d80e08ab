// Pre-tokenizers: split text (as codepoints) into words before BPE, each
// llama.cpp regex sequence written as a hand-made scanner.
//
// llama.cpp applies a sequence of regexes: the first splits the whole text,
// each next one splits every piece the previous ones produced (a match and the
// gaps around it all become pieces). Pieces are marked here by cut[i] = 1 where
// a piece starts; a scanner refines every piece [b, e) independently and sees
// only that piece (lookaheads and '$' stop at e).
#pragma once
#include <stdint.h>
#include "vocab/vocab.h"

namespace tern {

// cpts[0, n): the text. cut[0, n): set to 1 where a word starts (cut[0] = 1 when n > 0).
void pretokenize(vocab_pre pre, const uint32_t * cpts, int32_t n, uint8_t * cut);

}  // namespace tern
