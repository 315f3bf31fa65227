//! `[radio]`: the radio medium (UDGM or MRM), its ranges, success ratios and timing.

use serde::{Deserialize, Serialize};

use crate::scenario::ScenarioError;

use super::bad;
use super::keys::Medium;

/// A number, or a word that asks for the derived value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Derivable {
    /// This value.
    Value(f64),
    /// `"derived"`.
    Word(String),
}

/// The radio medium: Cooja's UDGM, or its MRM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Radio {
    /// `udgm` (Cooja's distance loss) or `mrm` (its multi-path ray tracer on open ground).
    pub medium: Medium,
    /// R, m.
    pub tx_range_m: f64,
    /// I, m.
    pub interference_range_m: f64,
    /// Cooja's TX success ratio.
    pub success_ratio_tx: f64,
    /// Cooja's RX success ratio (at distance R).
    pub success_ratio_rx: f64,
    /// Carrier-sense range, m, or `"derived"` (R·81/85).
    pub cca_range_m: Derivable,
    /// Transmit strobe to first symbol, µs.
    pub tx_turnaround_us: u32,
    /// MRM's settings (`medium = "mrm"`; Cooja's defaults when left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mrm: Option<MrmKeys>,
}

/// `[radio.mrm]`: Cooja's MRM (netmodel's `mesh::mrm`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MrmKeys {
    /// Output power, dBm, or `"derived"`: the power at which a frame sent `tx_range_m` away is
    /// received with probability `full_reception`.
    pub tx_power_dbm: Derivable,
    /// What "certain reception at tx_range_m" means for the derived power.
    pub full_reception: f64,
    /// Background noise, dBm.
    pub noise_dbm: f64,
    /// Receiver sensitivity, dBm.
    pub rx_sensitivity_dbm: f64,
    /// SNR needed, dB.
    pub snr_threshold_db: f64,
    /// The SNR's variance, dB² (system gain 4, noise 1).
    pub snr_variance_db2: f64,
    /// MRM's capture effect.
    pub capture: bool,
    /// A frame this much weaker does not disturb a reception, dB.
    pub capture_threshold_db: f64,
}

impl Default for MrmKeys {
    fn default() -> Self {
        let c = netmodel::mesh::mrm::MrmSpec::cooja(0.0);
        MrmKeys {
            tx_power_dbm: Derivable::Word("derived".into()),
            full_reception: 0.999,
            noise_dbm: c.noise_dbm,
            rx_sensitivity_dbm: c.rx_sensitivity_dbm,
            snr_threshold_db: c.snr_threshold_db,
            snr_variance_db2: c.snr_variance_db2,
            capture: c.capture,
            capture_threshold_db: c.capture_threshold_db,
        }
    }
}

impl Radio {
    /// MRM's settings, checked, the TX power derived where asked.
    pub(super) fn mrm_spec(&self) -> Result<netmodel::mesh::mrm::MrmSpec, ScenarioError> {
        if self.success_ratio_tx != 1.0 || self.success_ratio_rx != 1.0 {
            return bad(
                "radio.success_ratio_tx",
                "and success_ratio_rx are UDGM's: they must be 1 with medium = \"mrm\"",
            );
        }
        let k = self.mrm.clone().unwrap_or_default();
        for (key, v) in [
            ("radio.mrm.noise_dbm", k.noise_dbm),
            ("radio.mrm.rx_sensitivity_dbm", k.rx_sensitivity_dbm),
            ("radio.mrm.snr_threshold_db", k.snr_threshold_db),
        ] {
            if !(-300.0..=300.0).contains(&v) {
                return bad(key, "must be a level between -300 and 300");
            }
        }
        if !(0.0..=100.0).contains(&k.snr_variance_db2) {
            return bad("radio.mrm.snr_variance_db2", "must be in [0, 100]");
        }
        if !(0.0..=100.0).contains(&k.capture_threshold_db) {
            return bad("radio.mrm.capture_threshold_db", "must be in [0, 100]");
        }
        let spec = netmodel::mesh::mrm::MrmSpec {
            tx_power_dbm: 0.0,
            noise_dbm: k.noise_dbm,
            rx_sensitivity_dbm: k.rx_sensitivity_dbm,
            snr_threshold_db: k.snr_threshold_db,
            snr_variance_db2: k.snr_variance_db2,
            capture: k.capture,
            capture_threshold_db: k.capture_threshold_db,
        };
        let tx_power_dbm = match k.tx_power_dbm {
            Derivable::Value(v) if (-100.0..=100.0).contains(&v) => v,
            Derivable::Word(w) if w == "derived" => {
                if !(k.full_reception > 0.5 && k.full_reception < 1.0) {
                    return bad("radio.mrm.full_reception", "must be in (0.5, 1)");
                }
                spec.power_for(k.full_reception, self.tx_range_m)
            }
            _ => return bad("radio.mrm.tx_power_dbm", "must be a power in [-100, 100] dBm or \"derived\""),
        };
        Ok(netmodel::mesh::mrm::MrmSpec { tx_power_dbm, ..spec })
    }
}

impl Default for Radio {
    fn default() -> Self {
        Radio {
            medium: Medium::Udgm,
            tx_range_m: 10.0,
            interference_range_m: 20.0,
            success_ratio_tx: 1.0,
            success_ratio_rx: 1.0,
            cca_range_m: Derivable::Word("derived".into()),
            tx_turnaround_us: 224,
            mrm: None,
        }
    }
}
