//! Controller speed: one exchange cycle (start, two timeouts, completion with a sample) per
//! iteration, for a few algorithms.

use coap_cc::{CcConfig, Completion, Echo, Instant, Start};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn controllers(c: &mut Criterion) {
    let mut g = c.benchmark_group("coap-cc exchange cycle");
    g.throughput(Throughput::Elements(1));
    for name in ["default", "cocoa", "linux_rto", "fasor", "cocoa_pp"] {
        let cfg = CcConfig::parse(&format!("{name}:max_retransmit=20")).unwrap();
        let mut ctl = cfg.build();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut now = Instant::ZERO;
        g.bench_function(name, |b| {
            b.iter(|| {
                let start = now;
                let mut ex = ctl.start(now, Start { outstanding: 0, confirmable: true }, &mut rng);
                let mut sent = [start; 3];
                for s in sent.iter_mut().skip(1) {
                    now += ex.rto();
                    *s = now;
                    ctl.on_timeout(now, &mut ex, &mut rng);
                }
                now += coap_cc::Duration::from_millis(700);
                ctl.on_complete(now, &ex, &Completion { sent: &sent, echo: Echo::None, piggybacked: true });
            })
        });
    }
    g.finish();
}

criterion_group!(benches, controllers);
criterion_main!(benches);
