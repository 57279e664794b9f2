//! A fast hasher for maps and sets whose iteration order nothing reads.
//!
//! FxHash (the multiply-rotate hash rustc uses): much cheaper than the
//! standard library's SipHash on short keys, but not resistant to chosen
//! collisions, so it is only used where the number of keys is small and
//! bounded by the size of one test (a skeleton's set and relation names,
//! the states of one barrier search), never for a map that grows with
//! what a user or a network peer sends.

/// FxHash (rustc's): a multiply-rotate hash, much cheaper than SipHash on
/// short keys; for maps whose iteration order nothing depends on.
#[derive(Default)]
pub struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
}

/// The hasher of [`FxHasher`] maps.
pub type FastHash = std::hash::BuildHasherDefault<FxHasher>;
