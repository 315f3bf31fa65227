//! Worlds: the environments a scenario can describe, behind one trait and chosen by the
//! scenario's `env` key. The wired reference bottleneck (no `env`) and the low-power mesh
//! (`env = "lln"`) are the two built in; a crate of its own adds another with [`register`] (a
//! LoRaWAN or Wi-Fi medium, say), and from then on a sweep plan or a scenario file naming its
//! `env` runs it, with no change to the experiment library.
//!
//! A [`World`] reads a scenario table into a [`WorldScenario`]: resolved (its algorithm written
//! out with every parameter), seeded, serialisable (the cell id of a sweep hashes it), and able to
//! run one replication into a [`RepResult`], and, if the world can, to give its network live
//! between real hosts ([`Emulation`]). The world's own counters travel in the result's
//! [`crate::NetworkReport`] (a model outside this crate reports [`crate::NetworkReport::Other`]).

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, RwLock};

use crate::emulation::{self, Emulation};
use crate::mesh::{self, MeshScenario};
use crate::{run_rep, Detail, Progress, RepResult, Scenario};

/// An environment scenarios can describe.
pub trait World: Send + Sync + fmt::Debug {
    /// The value of the scenario's `env` key that selects it (`""`: the scenario has none).
    fn env(&self) -> &'static str;

    /// What it is, in a word, for listings (`bottleneck`, `mesh`).
    fn kind(&self) -> &'static str;

    /// What it is, for messages (`wired bottleneck`, `low-power mesh`).
    fn title(&self) -> &'static str;

    /// The scenario a table written over nothing describes: what a sweep's cells start from
    /// when the plan names no preset.
    fn defaults(&self) -> toml::Table;

    /// Replications a sweep's cell runs when its plan says nothing: `None` keeps the
    /// scenario's own count.
    fn plan_reps(&self) -> Option<u32>;

    /// Reads, checks and resolves a scenario table (every key of the world's scenario; a key it
    /// does not know is an error).
    fn scenario(&self, table: toml::Table) -> Result<Box<dyn WorldScenario>, String>;

    /// The name a client's host index has in the result tables (the mesh: the node id, host + 1).
    fn client_label(&self, host: u32) -> u32 {
        host
    }
}

/// A resolved scenario of some [`World`]. What every scenario can do as data (JSON, copies) comes
/// with [`Stored`], implemented for every serialisable, clonable scenario.
pub trait WorldScenario: Stored {
    /// Its world.
    fn world(&self) -> &'static dyn World;
    /// Replications.
    fn reps(&self) -> u32;
    /// The master seed.
    fn seed_mut(&mut self) -> &mut u64;
    /// Readies a run (transport, routes, …) whose replications run on any thread.
    fn runner(&self) -> Result<Box<dyn Runner + '_>, String>;
    /// How much work one replication is, as a progress display weighs it; default: one unit.
    fn work_per_rep(&self) -> Work {
        Work::Replication
    }
    /// The scenario's network live between real hosts (`coapcc emulate`); by default, refused.
    fn emulation(&self) -> Result<Emulation, String> {
        Err(format!("the {} cannot be emulated at the IP level", self.world().title()))
    }
}

/// A replication's work, in the units a progress display counts (a sweep's weighs each cell by
/// it; `sim`'s counts the same units as they run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// This many exchanges (every exchange ends: a bottleneck's clients × exchanges).
    Exchanges(u64),
    /// This many seconds of virtual time (a run of fixed length, or at most that long).
    SimulatedSeconds(u64),
    /// One unit.
    Replication,
}

/// A scenario as data; implemented for every [`WorldScenario`] that is `Serialize + Clone`.
pub trait Stored: Send + Sync + fmt::Debug {
    /// The scenario as JSON (what results record).
    fn to_json(&self) -> serde_json::Value;
    /// The scenario as JSON text, fields in declaration order (what a sweep's cell id hashes).
    fn canonical(&self) -> String;
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn WorldScenario>;
    /// The concrete scenario, for callers that know its type.
    fn as_any(&self) -> &dyn Any;
}

impl<T: WorldScenario + serde::Serialize + Clone + 'static> Stored for T {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("scenarios serialize")
    }
    fn canonical(&self) -> String {
        serde_json::to_string(self).expect("scenarios serialize")
    }
    fn clone_box(&self) -> Box<dyn WorldScenario> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Clone for Box<dyn WorldScenario> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A scenario readied to run.
pub trait Runner: Sync {
    /// Replication `rep`, telling `progress` of every finished exchange.
    fn run_rep(&self, rep: u32, progress: Option<&dyn Progress>) -> RepResult;
    /// [`Runner::run_rep`], keeping `detail` of every exchange (`sim --out`'s exchanges.csv and
    /// rto.csv need [`Detail::Exchanges`]); by default what `run_rep` keeps.
    fn run_rep_detail(&self, rep: u32, progress: Option<&dyn Progress>, detail: Detail) -> RepResult {
        let _ = detail;
        self.run_rep(rep, progress)
    }
}

/// A scenario that runs with what resolving it made (the bottleneck: its typed transport; the
/// mesh: its [`mesh::Resolved`]), borrowed from a [`Kept`] or made for the run.
trait RunsWith<R: Clone>: WorldScenario + Clone + 'static {
    /// A runner of this scenario with `made`.
    fn runner_with<'a>(&'a self, made: Cow<'a, R>) -> Box<dyn Runner + 'a>;
    /// Its network live ([`WorldScenario::emulation`]) with `made`.
    fn emulation_with(&self, made: &R) -> Result<Emulation, String>;
}

/// A scenario a world read ([`World::scenario`]), kept with what resolving it made (nothing a
/// sweep's seed changes afterwards), so that running it reads and resolves nothing again. As data
/// it is the scenario: its JSON, and [`Stored::as_any`] gives the scenario's type.
#[derive(Debug, Clone)]
struct Kept<S, R> {
    scenario: S,
    made: Arc<R>,
}

impl<S: RunsWith<R>, R: Clone + fmt::Debug + Send + Sync + 'static> Stored for Kept<S, R> {
    fn to_json(&self) -> serde_json::Value {
        self.scenario.to_json()
    }
    fn canonical(&self) -> String {
        self.scenario.canonical()
    }
    fn clone_box(&self) -> Box<dyn WorldScenario> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self.scenario.as_any()
    }
}

impl<S: RunsWith<R>, R: Clone + fmt::Debug + Send + Sync + 'static> WorldScenario for Kept<S, R> {
    fn world(&self) -> &'static dyn World {
        self.scenario.world()
    }
    fn reps(&self) -> u32 {
        self.scenario.reps()
    }
    fn seed_mut(&mut self) -> &mut u64 {
        self.scenario.seed_mut()
    }
    fn work_per_rep(&self) -> Work {
        self.scenario.work_per_rep()
    }
    fn runner(&self) -> Result<Box<dyn Runner + '_>, String> {
        Ok(self.scenario.runner_with(Cow::Borrowed(&*self.made)))
    }
    fn emulation(&self) -> Result<Emulation, String> {
        self.scenario.emulation_with(&self.made)
    }
}

/// The wired reference bottleneck ([`Scenario`]); scenarios without `env`.
#[derive(Debug)]
pub struct Bottleneck;

/// The low-power mesh ([`MeshScenario`]); `env = "lln"`.
#[derive(Debug)]
pub struct Mesh;

/// The worlds built in.
pub static BUILT_IN: [&dyn World; 2] = [&Bottleneck, &Mesh];

static REGISTERED: RwLock<Vec<&'static dyn World>> = RwLock::new(Vec::new());

/// Every world: the built-in ones, then those registered.
pub fn all() -> Vec<&'static dyn World> {
    let mut v: Vec<&'static dyn World> = BUILT_IN.to_vec();
    v.extend(REGISTERED.read().unwrap_or_else(|p| p.into_inner()).iter().copied());
    v
}

/// Adds a world for the rest of the process; refuses an `env` already taken.
pub fn register(world: &'static dyn World) -> Result<(), String> {
    let mut table = REGISTERED.write().unwrap_or_else(|p| p.into_inner());
    let env = world.env();
    if BUILT_IN.iter().chain(table.iter()).any(|w| w.env() == env) {
        return Err(format!("a world with env = \"{env}\" is already registered"));
    }
    table.push(world);
    Ok(())
}

/// The world a scenario table's `env` names (no `env`: the wired bottleneck); an error naming
/// the known ones otherwise (a misspelt `env` would else be read as a bottleneck scenario).
pub fn of(table: &toml::Table) -> Result<&'static dyn World, String> {
    let env = match table.get("env") {
        None => "",
        Some(toml::Value::String(s)) => s.as_str(),
        Some(v) => return Err(format!("env = {v}: must be a string")),
    };
    let worlds = all();
    worlds.iter().copied().find(|w| w.env() == env).ok_or_else(|| {
        let known: Vec<String> = worlds
            .iter()
            .filter(|w| !w.env().is_empty())
            .map(|w| format!("\"{}\" is the {}", w.env(), w.title()))
            .collect();
        format!("env = \"{env}\": unknown; {}, and a scenario without env is the wired bottleneck", known.join(", "))
    })
}

/// The scenario a TOML text describes, read by the world its `env` names.
pub fn read(text: &str) -> Result<Box<dyn WorldScenario>, String> {
    let table: toml::Table =
        text.parse().map_err(|e: toml::de::Error| format!("scenario: {}", e.to_string().trim_end()))?;
    of(&table)?.scenario(table)
}

/// [`of`] a scenario's TOML text (text that is not TOML: the bottleneck, whose reader reports it).
pub fn of_text(text: &str) -> Result<&'static dyn World, String> {
    text.parse::<toml::Table>().map_or(Ok(&Bottleneck as &dyn World), |t| of(&t))
}

impl World for Bottleneck {
    fn env(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "bottleneck"
    }
    fn title(&self) -> &'static str {
        "wired bottleneck"
    }
    fn defaults(&self) -> toml::Table {
        toml::Table::try_from(Scenario::thesis()).expect("the preset serializes")
    }
    fn plan_reps(&self) -> Option<u32> {
        Some(1)
    }
    fn scenario(&self, table: toml::Table) -> Result<Box<dyn WorldScenario>, String> {
        let s = Scenario::from_table(table).map_err(|e| e.to_string())?;
        let (scenario, transport) = s.resolve_with_transport().map_err(|e| e.to_string())?;
        Ok(Box::new(Kept { scenario, made: Arc::new(transport) }))
    }
}

impl WorldScenario for Scenario {
    fn world(&self) -> &'static dyn World {
        &Bottleneck
    }
    fn reps(&self) -> u32 {
        self.reps
    }
    fn seed_mut(&mut self) -> &mut u64 {
        &mut self.seed
    }
    fn work_per_rep(&self) -> Work {
        Work::Exchanges(u64::from(self.clients) * u64::from(self.exchanges))
    }
    fn runner(&self) -> Result<Box<dyn Runner + '_>, String> {
        Ok(self.runner_with(Cow::Owned(self.transport().map_err(|e| e.to_string())?)))
    }
    fn emulation(&self) -> Result<Emulation, String> {
        Ok(emulation::bottleneck(&self.resolve().map_err(|e| e.to_string())?))
    }
}

impl RunsWith<crate::Transport> for Scenario {
    fn runner_with<'a>(&'a self, transport: Cow<'a, crate::Transport>) -> Box<dyn Runner + 'a> {
        Box::new(BottleneckRun { scenario: self, transport })
    }
    fn emulation_with(&self, _: &crate::Transport) -> Result<Emulation, String> {
        Ok(emulation::bottleneck(self))
    }
}

struct BottleneckRun<'a> {
    scenario: &'a Scenario,
    transport: Cow<'a, crate::Transport>,
}

impl Runner for BottleneckRun<'_> {
    fn run_rep(&self, rep: u32, progress: Option<&dyn Progress>) -> RepResult {
        run_rep(self.scenario, &self.transport, rep, progress)
    }
    fn run_rep_detail(&self, rep: u32, progress: Option<&dyn Progress>, detail: Detail) -> RepResult {
        crate::run_rep_with(self.scenario, &self.transport, rep, progress, detail)
    }
}

impl World for Mesh {
    fn env(&self) -> &'static str {
        "lln"
    }
    fn kind(&self) -> &'static str {
        "mesh"
    }
    fn title(&self) -> &'static str {
        "low-power mesh"
    }
    fn defaults(&self) -> toml::Table {
        toml::Table::try_from(MeshScenario::default()).expect("the preset serializes")
    }
    fn plan_reps(&self) -> Option<u32> {
        None
    }
    fn scenario(&self, table: toml::Table) -> Result<Box<dyn WorldScenario>, String> {
        let s: MeshScenario = table.try_into().map_err(|e: toml::de::Error| e.to_string().trim_end().to_string())?;
        let resolved = s.resolve().map_err(|e| e.to_string())?;
        // a cell runs one algorithm: the resolved one, every parameter written out
        let cc = crate::scenario::resolved_cc_text(&resolved.cc, &s.cc_defaults);
        let scenario = MeshScenario { cc, algorithms: Vec::new(), ..s };
        Ok(Box::new(Kept { scenario, made: Arc::new(resolved) }))
    }
    fn client_label(&self, host: u32) -> u32 {
        host + 1
    }
}

impl WorldScenario for MeshScenario {
    fn world(&self) -> &'static dyn World {
        &Mesh
    }
    fn reps(&self) -> u32 {
        self.reps
    }
    fn seed_mut(&mut self) -> &mut u64 {
        &mut self.seed
    }
    fn work_per_rep(&self) -> Work {
        Work::SimulatedSeconds(self.duration_s as u64)
    }
    fn runner(&self) -> Result<Box<dyn Runner + '_>, String> {
        Ok(self.runner_with(Cow::Owned(self.resolve().map_err(|e| e.to_string())?)))
    }
    fn emulation(&self) -> Result<Emulation, String> {
        self.emulation_with(&self.resolve().map_err(|e| e.to_string())?)
    }
}

impl RunsWith<mesh::Resolved> for MeshScenario {
    fn runner_with<'a>(&'a self, resolved: Cow<'a, mesh::Resolved>) -> Box<dyn Runner + 'a> {
        Box::new(MeshRunner { scenario: self, resolved })
    }
    fn emulation_with(&self, resolved: &mesh::Resolved) -> Result<Emulation, String> {
        emulation::mesh(self, resolved)
    }
}

struct MeshRunner<'a> {
    scenario: &'a MeshScenario,
    resolved: Cow<'a, mesh::Resolved>,
}

impl Runner for MeshRunner<'_> {
    fn run_rep(&self, rep: u32, progress: Option<&dyn Progress>) -> RepResult {
        mesh::run_rep(self.scenario, &self.resolved, rep, progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_chooses_the_world() {
        let t = |s: &str| s.parse::<toml::Table>().unwrap();
        assert_eq!(of(&t("clients = 3")).unwrap().kind(), "bottleneck");
        assert_eq!(of(&t("env = \"lln\"")).unwrap().kind(), "mesh");
        let e = of(&t("env = \"lnn\"")).err().unwrap();
        assert!(e.contains("env = \"lnn\": unknown; \"lln\" is the low-power mesh"), "{e}");
        assert!(of(&t("env = 3")).is_err());
        assert_eq!(register(&Mesh), Err("a world with env = \"lln\" is already registered".into()));
    }
}
