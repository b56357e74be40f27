//! IOCTL (2.2.31, 2.2.32) and the two FSCTLs this client sends: the
//! server's network interfaces (multichannel) and the 3.0/3.0.2 check that
//! nobody tampered with the negotiation.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::super::header::HEADER_LEN;
use super::super::wire::{Decoded, Reader, Writer, slice_at};
use super::{FileId, body, part};

pub(crate) const FSCTL_QUERY_NETWORK_INTERFACE_INFO: u32 = 0x0014_01FC;
pub(crate) const FSCTL_VALIDATE_NEGOTIATE_INFO: u32 = 0x0014_0204;
const IS_FSCTL: u32 = 1;

pub(crate) fn encode_ioctl(code: u32, file: FileId, input: &[u8], max_out: u32, out: &mut Vec<u8>) {
    let mut w = Writer::new(out);
    let in_off = if input.is_empty() { 0 } else { HEADER_LEN + 56 };
    w.u16(57).u16(0).u32(code).bytes(&file.0);
    w.u32(in_off as u32).u32(input.len() as u32).u32(0);
    w.u32(0).u32(0).u32(max_out);
    w.u32(IS_FSCTL).u32(0);
    w.bytes(input);
}

/// The output buffer of an IOCTL response.
pub(crate) fn decode_ioctl(msg: &[u8]) -> Decoded<&[u8]> {
    let mut r = body(msg, 49, "IOCTL response")?;
    r.skip(2 + 4 + 16 + 8)?; // Reserved, CtlCode, FileId, Input offset/count
    let off = r.u32()? as usize;
    let len = r.u32()? as usize;
    part(msg, off, len, "IOCTL output buffer")
}

/// One of the server's interfaces, as it reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetInterface {
    pub(crate) index: u32,
    pub(crate) rss: bool,
    pub(crate) rdma: bool,
    /// Bits per second.
    pub(crate) link_speed: u64,
    pub addr: IpAddr,
}

/// Decodes NETWORK_INTERFACE_INFO entries (2.2.32.5); entries of another
/// address family are skipped. The chain must move forward inside the
/// buffer, so a hostile reply cannot loop.
pub(crate) fn decode_interfaces(buf: &[u8]) -> Decoded<Vec<NetInterface>> {
    let mut out = Vec::new();
    let mut off = 0usize;
    if buf.is_empty() {
        return Ok(out);
    }
    loop {
        let e = slice_at(buf, off, 152, "network interface entry")?;
        let mut r = Reader::new(e, "network interface entry");
        let next = r.u32()? as usize;
        let index = r.u32()?;
        let capability = r.u32()?;
        r.skip(4)?;
        let link_speed = r.u64()?;
        let family = r.u16()?;
        let addr = match family {
            0x0002 => {
                r.skip(2)?;
                let a: [u8; 4] = r.array()?;
                Some(IpAddr::V4(Ipv4Addr::from(a)))
            }
            0x0017 => {
                r.skip(2 + 4)?;
                let a: [u8; 16] = r.array()?;
                Some(IpAddr::V6(Ipv6Addr::from(a)))
            }
            _ => None,
        };
        if let Some(addr) = addr {
            out.push(NetInterface {
                index,
                rss: capability & 1 != 0,
                rdma: capability & 2 != 0,
                link_speed,
                addr,
            });
        }
        if next == 0 {
            return Ok(out);
        }
        r.check(next >= 152)?;
        off = off.checked_add(next).filter(|&o| o < buf.len()).ok_or(
            super::super::wire::Malformed {
                what: "network interface chain",
                at: off,
            },
        )?;
    }
}

/// The interfaces' addresses at `port`, fastest first (as the Windows
/// client orders its channels), skipping duplicates.
pub(crate) fn channel_addresses(ifaces: &[NetInterface], port: u16) -> Vec<SocketAddr> {
    let mut sorted: Vec<&NetInterface> = ifaces.iter().collect();
    sorted.sort_by_key(|i| std::cmp::Reverse(i.link_speed));
    let mut out: Vec<SocketAddr> = Vec::new();
    for i in sorted {
        let a = SocketAddr::new(i.addr, port);
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// VALIDATE_NEGOTIATE_INFO's input (2.2.31.4): what this client offered.
pub(crate) fn encode_validate_negotiate(
    capabilities: u32,
    guid: [u8; 16],
    security_mode: u16,
    dialects: &[u16],
) -> Vec<u8> {
    let mut v = Vec::with_capacity(24 + 2 * dialects.len());
    let mut w = Writer::new(&mut v);
    w.u32(capabilities).bytes(&guid).u16(security_mode);
    w.u16(dialects.len() as u16);
    for d in dialects {
        w.u16(*d);
    }
    v
}

/// Its output: what the server says it negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValidateNegotiate {
    pub(crate) capabilities: u32,
    pub(crate) guid: [u8; 16],
    pub(crate) security_mode: u16,
    pub(crate) dialect: u16,
}

pub(crate) fn decode_validate_negotiate(buf: &[u8]) -> Decoded<ValidateNegotiate> {
    let mut r = Reader::new(buf, "VALIDATE_NEGOTIATE_INFO response");
    Ok(ValidateNegotiate {
        capabilities: r.u32()?,
        guid: r.array()?,
        security_mode: r.u16()?,
        dialect: r.u16()?,
    })
}
