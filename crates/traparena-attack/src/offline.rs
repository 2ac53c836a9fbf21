use async_trait::async_trait;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use traparena_task::AttackMessage;

use crate::error::AttackError;
use crate::traits::{Advice, AttackContext, Attacker};

/// Task-specific messages from the task's `attacks.json`, each delivered at most once, in an
/// order shuffled by the seed. Silent when the pool is used up.
#[derive(Debug, Clone)]
pub struct OfflineAttacker {
    pool: Vec<AttackMessage>,
}

impl OfflineAttacker {
    /// An attacker drawing from `pool` in a seeded random order.
    pub fn new(mut pool: Vec<AttackMessage>, seed: u64) -> OfflineAttacker {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Fisher–Yates, then reversed so that `pop` yields the shuffled order.
        for i in (1..pool.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            pool.swap(i, j);
        }
        pool.reverse();
        OfflineAttacker { pool }
    }

    /// Messages not yet used.
    pub fn remaining(&self) -> usize {
        self.pool.len()
    }
}

#[async_trait]
impl Attacker for OfflineAttacker {
    fn name(&self) -> String {
        "offline".into()
    }

    async fn advise(&mut self, _ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        Ok(self.pool.pop().map(|m| Advice {
            text: m.text,
            claims: m.claims,
        }))
    }
}
