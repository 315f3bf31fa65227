//! One module per algorithm of the literature; each opens with its source, its
//! rules, its constants and every reading chosen where the source is open.

pub mod basic_rto;
pub mod cocoa;
pub mod cocoa_pp;
pub mod default_coap;
pub mod default_params;
pub mod eifel;
pub mod fasor;
pub mod full_backoff;
pub mod gsrtc;
pub mod gst;
pub mod hedge;
pub mod linux_rto;
pub mod peakhopper;
pub mod rtt_coap;
