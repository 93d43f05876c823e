//! The in-memory history in front of the store: it saves reads and never changes what a run
//! sees. Every answer is compared with the store's own.

mod support;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use riskgate::core::agent::ChatMessage;
use riskgate::core::ports::Store;
use riskgate::store::{HistoryCache, MemoryStore};
use support::hooked_store::{Hook, HookedStore};
use support::turns::turn;

fn reads(store: &HookedStore) -> usize {
    store
        .completed()
        .iter()
        .filter(|op| **op == "load_history")
        .count()
}

fn setup(capacity: usize) -> (Arc<MemoryStore>, Arc<HookedStore>, HistoryCache) {
    let memory = Arc::new(MemoryStore::new());
    let hooked = HookedStore::new(memory.clone());
    let cache = HistoryCache::new(hooked.clone(), capacity);
    (memory, hooked, cache)
}

#[tokio::test]
async fn a_channel_is_read_once_then_served_from_memory_with_its_appends() {
    let (memory, hooked, cache) = setup(10);
    memory.append("c1", &turn(0, 10)).await.expect("seed");
    assert_eq!(
        cache.load_history("c1", 10_000).await.expect("load"),
        turn(0, 10)
    );
    for n in 1..5 {
        cache.append("c1", &turn(n, 10)).await.expect("append");
        assert_eq!(
            cache.load_history("c1", 10_000).await.expect("load"),
            memory.load_history("c1", 10_000).await.expect("store")
        );
    }
    assert_eq!(reads(&hooked), 1, "only the first load reads the store");
    // A larger budget than the one cached reads the store.
    cache.load_history("c1", 20_000).await.expect("load");
    assert_eq!(reads(&hooked), 2);
}

#[tokio::test]
async fn every_answer_matches_the_store_over_a_long_mixed_sequence() {
    let (memory, _hooked, cache) = setup(3);
    // A fixed pseudo-random walk: appends of turns of many sizes, loads with several
    // budgets, clears, across five channels (more than the cache holds).
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    for step in 0..2_000 {
        let channel = format!("c{}", next(5));
        match next(10) {
            0..=3 => {
                let size = next(3_000) as usize;
                cache
                    .append(&channel, &turn(step, size))
                    .await
                    .expect("append");
            }
            4 => cache.clear(&channel).await.expect("clear"),
            _ => {
                let budget = [500, 4_000, 24_000][next(3) as usize];
                assert_eq!(
                    cache.load_history(&channel, budget).await.expect("load"),
                    memory.load_history(&channel, budget).await.expect("store"),
                    "step {step}: {channel} with budget {budget}"
                );
            }
        }
        assert!(cache.cached_channels() <= 3);
    }
}

/// Starts a load of `c1` whose answer (read at once) arrives 5 s later, and returns once the
/// store has been read.
async fn delayed_read(
    hooked: &HookedStore,
    cache: &Arc<HistoryCache>,
) -> tokio::task::JoinHandle<Result<Vec<ChatMessage>, riskgate::core::ports::StoreError>> {
    hooked.hook("load_history", Hook::DelayAnswer(Duration::from_secs(5)));
    let cache = cache.clone();
    let reader = tokio::spawn(async move { cache.load_history("c1", 10_000).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    reader
}

#[tokio::test(start_paused = true)]
async fn a_load_that_races_a_clear_does_not_keep_what_it_read() {
    let (memory, hooked, cache) = setup(10);
    let cache = Arc::new(cache);
    memory.append("c1", &turn(0, 10)).await.expect("seed");
    let reader = delayed_read(&hooked, &cache).await;
    // The answer is on its way; the conversation is forgotten meanwhile.
    cache.clear("c1").await.expect("clear");
    let raced = reader.await.expect("reader").expect("load");
    assert_eq!(raced, turn(0, 10), "the racing read saw the old rows");
    assert_eq!(cache.cached_channels(), 0, "and did not keep them");
    assert!(
        cache
            .load_history("c1", 10_000)
            .await
            .expect("load")
            .is_empty(),
        "the next run sees the cleared conversation"
    );
}

#[tokio::test(start_paused = true)]
async fn a_load_that_races_an_append_does_not_keep_what_it_read() {
    let (memory, hooked, cache) = setup(10);
    let cache = Arc::new(cache);
    memory.append("c1", &turn(0, 10)).await.expect("seed");
    let reader = delayed_read(&hooked, &cache).await;
    cache.append("c1", &turn(1, 10)).await.expect("append");
    assert_eq!(
        reader.await.expect("reader").expect("load"),
        turn(0, 10),
        "the racing read saw the store before the append"
    );
    assert_eq!(cache.cached_channels(), 0);
    let mut both = turn(0, 10);
    both.extend(turn(1, 10));
    assert_eq!(cache.load_history("c1", 10_000).await.expect("load"), both);
}

#[tokio::test]
async fn a_failed_append_forgets_the_channel() {
    let (memory, hooked, cache) = setup(10);
    memory.append("c1", &turn(0, 10)).await.expect("seed");
    cache.load_history("c1", 10_000).await.expect("load");
    hooked.hook("append", Hook::Fail("the database is gone".into()));
    assert!(cache.append("c1", &turn(1, 10)).await.is_err());
    assert_eq!(cache.cached_channels(), 0);
    assert_eq!(
        cache.load_history("c1", 10_000).await.expect("load"),
        turn(0, 10),
        "what the store holds, read again"
    );
    assert_eq!(reads(&hooked), 2);
}

#[tokio::test]
async fn a_cancelled_append_forgets_the_channel() {
    let (memory, hooked, cache) = setup(10);
    memory.append("c1", &turn(0, 10)).await.expect("seed");
    cache.load_history("c1", 10_000).await.expect("load");
    hooked.hook("append", Hook::Delay(Duration::from_secs(60)));
    let turn1 = turn(1, 10);
    let cancelled =
        tokio::time::timeout(Duration::from_millis(10), cache.append("c1", &turn1)).await;
    assert!(cancelled.is_err(), "the append was cut off");
    assert_eq!(cache.cached_channels(), 0);
}

#[tokio::test]
async fn pruning_forgets_every_channel() {
    let (memory, _hooked, cache) = setup(10);
    for channel in ["c1", "c2"] {
        memory.append(channel, &turn(0, 10)).await.expect("seed");
        cache.load_history(channel, 10_000).await.expect("load");
    }
    assert_eq!(cache.cached_channels(), 2);
    let later = SystemTime::now() + Duration::from_secs(60);
    cache.prune_history(later).await.expect("prune");
    assert_eq!(cache.cached_channels(), 0);
    assert!(
        cache
            .load_history("c1", 10_000)
            .await
            .expect("load")
            .is_empty()
    );
}
