//! cat language: parser and interpreter over bitset relations.
