//! Launch geometry and the per-launch layout: which grid thread runs which
//! role of which instance, and where each instance's locations live.
//!
//! A launch has `groups × blocks_per_group` test blocks followed by the
//! stressing blocks. Test block `b` belongs to CTA group `b % groups`; in
//! it, warp `w` runs role warp `w % warps_per_set` of *set* `w /
//! warps_per_set`, and lane `l` of set `s` is the block's position `s·32 +
//! l`. An instance's roles of one group share a position (so they share a
//! block, in different warps); its groups sit in blocks of different
//! groups. Which instance a position of a group holds is a permutation
//! drawn per launch and group ([`Tables::pairing`]), so the blocks that
//! meet change from launch to launch, as in MC Mutants' PTE. Each
//! instance's locations take slots of `line_words` words in a location
//! buffer, the slots drawn per launch ([`Tables::offsets`]), so that the
//! locations of an instance land on different lines and next to other
//! instances' locations.

use super::Plan;
use super::rng::Rng;

/// Lanes per warp.
pub const WARP: usize = 32;

/// The shape of a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// CTA groups of the test.
    pub groups: usize,
    /// Warps one instance takes per block (largest group).
    pub warps_per_set: usize,
    /// Instance sets per block.
    pub sets_per_block: usize,
    /// Test blocks per CTA group.
    pub blocks_per_group: usize,
    /// Stressing blocks after the test blocks.
    pub stress_blocks: usize,
    /// Locations per instance.
    pub locations: usize,
    /// Words per location slot (the spread: a line of 4-byte words).
    pub line_words: usize,
    /// Spare slots per instance slot in the location buffer (≥ 1): more
    /// leaves gaps, so neighbours change more between launches.
    pub spread: usize,
}

impl Geometry {
    /// A geometry for `plan` with about `threads_per_block` threads per
    /// block and `blocks_per_group` test blocks per group.
    pub fn new(
        plan: &Plan,
        threads_per_block: usize,
        blocks_per_group: usize,
        stress_blocks: usize,
        line_words: usize,
        spread: usize,
    ) -> Geometry {
        let warps_per_set = plan.warps_per_set.max(1);
        let sets = (threads_per_block / WARP / warps_per_set).max(1);
        Geometry {
            groups: plan.groups.max(1),
            warps_per_set,
            sets_per_block: sets,
            blocks_per_group: blocks_per_group.max(1),
            stress_blocks,
            locations: plan.locations.len(),
            line_words: line_words.max(1),
            spread: spread.max(1),
        }
    }

    /// Threads per block.
    pub fn block_threads(&self) -> usize {
        self.sets_per_block * self.warps_per_set * WARP
    }

    /// Positions (instances) per block.
    pub fn positions_per_block(&self) -> usize {
        self.sets_per_block * WARP
    }

    /// Instances per launch.
    pub fn instances(&self) -> usize {
        self.blocks_per_group * self.positions_per_block()
    }

    /// Test blocks.
    pub fn test_blocks(&self) -> usize {
        self.groups * self.blocks_per_group
    }

    /// All blocks of a launch.
    pub fn grid_blocks(&self) -> usize {
        self.test_blocks() + self.stress_blocks
    }

    /// Location slots in the location buffer.
    pub fn slots(&self) -> usize {
        self.instances() * self.locations.max(1) * self.spread
    }

    /// Words of the location buffer.
    pub fn location_words(&self) -> usize {
        self.slots() * self.line_words
    }

    /// What grid thread (`block`, `thread`) runs, given a launch's
    /// pairing: `Some((instance, group, role warp))`, or `None` for a
    /// stressing or idle thread. The kernel computes the same (emit.rs).
    pub fn assignment(
        &self,
        pairing: &[u32],
        block: usize,
        thread: usize,
    ) -> Option<(usize, usize, usize)> {
        if block >= self.test_blocks() || thread >= self.block_threads() {
            return None;
        }
        let group = block % self.groups;
        let k = block / self.groups;
        let warp = thread / WARP;
        let lane = thread % WARP;
        let set = warp / self.warps_per_set;
        let role_warp = warp % self.warps_per_set;
        let position = k * self.positions_per_block() + set * WARP + lane;
        let instance = pairing[group * self.instances() + position] as usize;
        Some((instance, group, role_warp))
    }
}

/// The tables a launch reads: the instance each group's position holds,
/// and each instance's location word offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    /// `pairing[group · instances + position]` = instance.
    pub pairing: Vec<u32>,
    /// `offsets[instance · locations + j]` = word index of location `j`.
    pub offsets: Vec<u32>,
}

impl Tables {
    /// Draws a launch's tables.
    pub fn draw(g: &Geometry, rng: &mut Rng) -> Tables {
        let n = g.instances();
        let mut pairing = Vec::with_capacity(g.groups * n);
        for _ in 0..g.groups {
            let mut p: Vec<u32> = (0..n as u32).collect();
            rng.shuffle(&mut p);
            pairing.extend(p);
        }
        // The first `need` places of a random permutation of the slots
        // (a partial Fisher–Yates: only those places are drawn).
        let mut slots: Vec<u32> = (0..g.slots() as u32).collect();
        let need = n * g.locations;
        for i in 0..need.min(slots.len().saturating_sub(1)) {
            let j = i + rng.below((slots.len() - i) as u64) as usize;
            slots.swap(i, j);
        }
        let offsets = slots[..need]
            .iter()
            .map(|s| s * g.line_words as u32)
            .collect();
        Tables { pairing, offsets }
    }
}
