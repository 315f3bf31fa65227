//! Which live exchange a message names: the exchange keyed by (peer, Message ID) for an ACK or
//! RST, by (peer, token) for a separate response.
//!
//! A key names the exchange that took it last: a newer exchange with the key of a live one (a
//! Message ID reused after 65,536 others, or the empty token every exchange of an endpoint
//! without tokens has) takes it over, and when the exchange holding a key finishes, the key names
//! none, even if an older live exchange had it too.
//!
//! An endpoint holds few live exchanges (NSTART per peer: a simulated client, one), so each
//! exchange carries two marks saying which keys it holds, and a lookup scans the live exchanges.
//! A simulation holds thousands of endpoints, and two maps of one entry each cost about 120 bytes
//! an endpoint. Past [`INDEX_FROM`] live exchanges, two sorted maps index the keys instead (built
//! from the marks, kept until no exchange is live), so an endpoint with many never scans.

use litemap::LiteMap;

use crate::report::ExchangeId;
use crate::token::Token;

/// Live exchanges from which the keys are indexed.
pub(crate) const INDEX_FROM: usize = 16;

/// The mark of an exchange that holds its (peer, Message ID) key.
pub(crate) const HOLDS_MID: u8 = 1;
/// The mark of an exchange that holds its (peer, token) key.
pub(crate) const HOLDS_TOKEN: u8 = 2;

/// What the keys need of a live exchange.
pub(crate) trait Keyed<A> {
    /// Its peer, Message ID and token.
    fn key(&self) -> (&A, u16, Token);
    /// Its marks ([`HOLDS_MID`], [`HOLDS_TOKEN`]).
    fn marks(&self) -> u8;
    /// Sets its marks.
    fn set_marks(&mut self, marks: u8);
}

/// The index of many live exchanges' keys.
#[derive(Debug)]
struct Index<A> {
    by_mid: LiteMap<(A, u16), ExchangeId>,
    by_token: LiteMap<(A, Token), ExchangeId>,
}

/// The keys of an endpoint's live exchanges, indexed from `FROM` live exchanges on; see the
/// module documentation.
#[derive(Debug)]
pub(crate) struct Keys<A, const FROM: usize = INDEX_FROM> {
    index: Option<Box<Index<A>>>,
}

impl<A, const FROM: usize> Default for Keys<A, FROM> {
    fn default() -> Self {
        Keys { index: None }
    }
}

impl<A: Ord + Clone, const FROM: usize> Keys<A, FROM> {
    /// Exchange `id`, just added to `live`, takes its keys.
    pub(crate) fn insert<E: Keyed<A>>(&mut self, live: &mut LiteMap<ExchangeId, E>, id: ExchangeId) {
        let Some((dest, mid, token)) = live.get(&id).map(|e| {
            let (d, m, t) = e.key();
            (d.clone(), m, t)
        }) else {
            return;
        };
        if let Some(ix) = self.index.as_deref_mut() {
            ix.by_mid.insert((dest.clone(), mid), id);
            ix.by_token.insert((dest, token), id);
            return;
        }
        // the new exchange holds both keys; another of the same peer loses those it shared
        for (&other, e) in live.iter_mut().filter(|(_, e)| *e.key().0 == dest) {
            let (_, m, t) = e.key();
            let lost = if m == mid { HOLDS_MID } else { 0 } | if t == token { HOLDS_TOKEN } else { 0 };
            let holds = if other == id { HOLDS_MID | HOLDS_TOKEN } else { e.marks() & !lost };
            e.set_marks(holds);
        }
        if live.len() >= FROM {
            self.index = Some(Box::new(Self::build(live)));
        }
    }

    /// The index of the keys the marks of `live` say.
    fn build<E: Keyed<A>>(live: &LiteMap<ExchangeId, E>) -> Index<A> {
        let mut ix = Index { by_mid: LiteMap::new(), by_token: LiteMap::new() };
        for (&id, e) in live.iter() {
            let marks = e.marks();
            let (d, m, t) = e.key();
            if marks & HOLDS_MID != 0 {
                ix.by_mid.insert((d.clone(), m), id);
            }
            if marks & HOLDS_TOKEN != 0 {
                ix.by_token.insert((d.clone(), t), id);
            }
        }
        ix
    }

    /// Exchange `id`, just taken out of `live` as `ex`, gives up the keys it holds.
    pub(crate) fn remove<E: Keyed<A>>(&mut self, live: &LiteMap<ExchangeId, E>, id: ExchangeId, ex: &E) {
        if live.is_empty() {
            self.index = None;
            return;
        }
        let Some(ix) = self.index.as_deref_mut() else { return }; // its marks left with it
        let (d, m, t) = ex.key();
        let by_mid = (d.clone(), m);
        if ix.by_mid.get(&by_mid) == Some(&id) {
            ix.by_mid.remove(&by_mid);
        }
        let by_token = (d.clone(), t);
        if ix.by_token.get(&by_token) == Some(&id) {
            ix.by_token.remove(&by_token);
        }
    }

    /// The live exchange that (`dest`, `mid`) names.
    pub(crate) fn by_mid<E: Keyed<A>>(&self, live: &LiteMap<ExchangeId, E>, dest: &A, mid: u16) -> Option<ExchangeId> {
        match self.index.as_deref() {
            Some(ix) => ix.by_mid.get(&(dest.clone(), mid)).copied(),
            None => Self::scan(live, HOLDS_MID, |d, m, _| d == dest && m == mid),
        }
    }

    /// The live exchange that (`dest`, `token`) names.
    pub(crate) fn by_token<E: Keyed<A>>(
        &self,
        live: &LiteMap<ExchangeId, E>,
        dest: &A,
        token: Token,
    ) -> Option<ExchangeId> {
        match self.index.as_deref() {
            Some(ix) => ix.by_token.get(&(dest.clone(), token)).copied(),
            None => Self::scan(live, HOLDS_TOKEN, |d, _, t| d == dest && t == token),
        }
    }

    /// The live exchange with mark `mark` whose key `is` the one looked for.
    fn scan<E: Keyed<A>>(
        live: &LiteMap<ExchangeId, E>,
        mark: u8,
        is: impl Fn(&A, u16, Token) -> bool,
    ) -> Option<ExchangeId> {
        live.iter().find_map(|(&id, e)| {
            let (d, m, t) = e.key();
            (e.marks() & mark != 0 && is(d, m, t)).then_some(id)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live exchange: peer, Message ID, token byte, marks.
    struct Ex(u32, u16, u8, u8);

    impl Keyed<u32> for Ex {
        fn key(&self) -> (&u32, u16, Token) {
            (&self.0, self.1, token(self.2))
        }
        fn marks(&self) -> u8 {
            self.3
        }
        fn set_marks(&mut self, marks: u8) {
            self.3 = marks;
        }
    }

    /// The token of byte `b`: empty for 0.
    fn token(b: u8) -> Token {
        Token::new(&[b][..(b != 0) as usize])
    }

    #[test]
    fn a_newer_exchange_takes_a_key_over_and_it_names_none_once_that_one_finishes() {
        let (mut keys, mut live): (Keys<u32>, _) = (Keys::default(), LiteMap::new());
        let id = ExchangeId;
        // two exchanges with peer 1 and the empty token; Message IDs 5 and 6
        live.insert(id(0), Ex(1, 5, 0, 0));
        keys.insert(&mut live, id(0));
        live.insert(id(1), Ex(1, 6, 0, 0));
        keys.insert(&mut live, id(1));
        assert_eq!((keys.by_mid(&live, &1, 5), keys.by_mid(&live, &1, 6)), (Some(id(0)), Some(id(1))));
        assert_eq!((keys.by_token(&live, &1, token(0)), keys.by_token(&live, &2, token(0))), (Some(id(1)), None));
        // the newer finishes: the empty token names none, though exchange 0 is live with it
        let ex = live.remove(&id(1)).unwrap();
        keys.remove(&live, id(1), &ex);
        assert_eq!((keys.by_token(&live, &1, token(0)), keys.by_mid(&live, &1, 5)), (None, Some(id(0))));
    }

    /// Runs `ops` on keys indexed from `FROM` live exchanges and on two maps updated the same
    /// way (the endpoint's keys before the marks): they must always name the same exchanges.
    fn same_as_two_maps<const FROM: usize>(
        ops: &[(u8, u32, u16, u8)],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut keys: Keys<u32, FROM> = Keys::default();
        let mut live: LiteMap<ExchangeId, Ex> = LiteMap::new();
        let mut by_mid: LiteMap<(u32, u16), ExchangeId> = LiteMap::new();
        let mut by_token: LiteMap<(u32, Token), ExchangeId> = LiteMap::new();
        for (n, &(op, dest, mid, tok)) in ops.iter().enumerate() {
            if op < 2 || live.is_empty() {
                let id = ExchangeId(n as u64);
                live.insert(id, Ex(dest, mid, tok, 0));
                keys.insert(&mut live, id);
                by_mid.insert((dest, mid), id);
                by_token.insert((dest, token(tok)), id);
            } else {
                // an exchange finishes: the (mid as index)-th live one
                let id = *live.iter().nth(mid as usize % live.len()).unwrap().0;
                let ex = live.remove(&id).unwrap();
                keys.remove(&live, id, &ex);
                if by_mid.get(&(ex.0, ex.1)) == Some(&id) {
                    by_mid.remove(&(ex.0, ex.1));
                }
                if by_token.get(&(ex.0, token(ex.2))) == Some(&id) {
                    by_token.remove(&(ex.0, token(ex.2)));
                }
            }
            for d in 0..3 {
                for m in 0..4 {
                    proptest::prop_assert_eq!(keys.by_mid(&live, &d, m), by_mid.get(&(d, m)).copied());
                }
                for t in 0..3 {
                    let want = by_token.get(&(d, token(t))).copied();
                    proptest::prop_assert_eq!(keys.by_token(&live, &d, token(t)), want);
                }
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// Whatever the exchanges come and go, the keys name what two maps would, with an index
        /// from 1 or 3 live exchanges, or none.
        #[test]
        fn the_keys_name_what_two_maps_would(
            ops in proptest::collection::vec((0u8..3, 0u32..3, 0u16..4, 0u8..3), 1..120),
        ) {
            same_as_two_maps::<1>(&ops)?;
            same_as_two_maps::<3>(&ops)?;
            same_as_two_maps::<{ usize::MAX }>(&ops)?;
        }
    }
}
