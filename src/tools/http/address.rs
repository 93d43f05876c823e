//! Which hosts and addresses count as private: loopback, private ranges, link-local,
//! unspecified, shared (CGNAT), multicast and reserved ranges, in every form an IPv6 address
//! can carry an IPv4 one. Also the cloud metadata endpoints, by name and by address, which are
//! refused whatever the private-network switch and the operator's allow list say, and the
//! networks (an address or a CIDR) an operator's deny rule can name.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Host;

/// Why a URL host is not a public internet host, or `None` when it is one (as far as the
/// text shows: names are checked again once resolved).
pub fn private_host_reason(host: &Host<&str>) -> Option<String> {
    match host {
        Host::Domain(domain) => {
            let name = domain.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") {
                Some(format!("{domain} names this machine"))
            } else {
                None
            }
        }
        Host::Ipv4(ip) => ipv4_reason(*ip).map(|r| format!("{ip} is {r}")),
        Host::Ipv6(ip) => ipv6_reason(*ip).map(|r| format!("{ip} is {r}")),
    }
}

/// Cloud instance metadata services by name (they hand out the machine's credentials):
/// Google Cloud (`metadata.google.internal`, `metadata.goog`, and the bare `metadata` its
/// resolvers answer), AWS (`instance-data`, `instance-data.ec2.internal`), Tencent Cloud
/// (`metadata.tencentyun.com`) and Equinix Metal (`metadata.platformequinix.com`,
/// `metadata.packet.net`). A subdomain of one of them counts too.
pub const METADATA_NAMES: [&str; 8] = [
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.tencentyun.com",
    "metadata.platformequinix.com",
    "metadata.packet.net",
];

/// Cloud metadata services by address: 169.254.169.254 (AWS, Google Cloud, Azure, Oracle
/// Cloud, DigitalOcean, OpenStack and most others), `fd00:ec2::254` (AWS over IPv6),
/// 169.254.170.2 (AWS ECS task credentials), 169.254.170.23 and `fd00:ec2::23` (AWS EKS pod
/// identity), 100.100.100.200 (Alibaba Cloud), 168.63.129.16 (Azure WireServer). Compared
/// after taking an IPv4 address out of its IPv6 forms.
pub const METADATA_ADDRESSES: [&str; 7] = [
    "169.254.169.254",
    "fd00:ec2::254",
    "169.254.170.2",
    "169.254.170.23",
    "fd00:ec2::23",
    "100.100.100.200",
    "168.63.129.16",
];

/// Why a URL host is a cloud metadata endpoint, or `None`.
pub fn metadata_host_reason(host: &Host<&str>) -> Option<String> {
    match host {
        Host::Domain(domain) => {
            let name = domain.trim_end_matches('.').to_ascii_lowercase();
            // A domain that is an address in disguise (`169.254.169.254.`) is one.
            if let Ok(ip) = name.parse::<IpAddr>() {
                return metadata_ip_reason(ip);
            }
            METADATA_NAMES
                .iter()
                .find(|m| {
                    name == **m
                        || name
                            .strip_suffix(**m)
                            .is_some_and(|rest| rest.ends_with('.'))
                })
                .map(|m| format!("{domain} is a cloud metadata endpoint ({m})"))
        }
        Host::Ipv4(ip) => metadata_ip_reason(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => metadata_ip_reason(IpAddr::V6(*ip)),
    }
}

/// Why an address is a cloud metadata endpoint, or `None`.
pub fn metadata_ip_reason(ip: IpAddr) -> Option<String> {
    let plain = canonical(ip);
    METADATA_ADDRESSES
        .iter()
        .filter_map(|m| m.parse::<IpAddr>().ok())
        .find(|m| *m == plain)
        .map(|m| format!("{ip} is a cloud metadata address ({m})"))
}

/// An IPv4 address carried in an IPv6 one (mapped, compatible, NAT64) as the IPv4 address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => embedded_ipv4(v6).map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// An address or a CIDR network from an operator's deny rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// `10.0.0.0/8`, `fd00::/8`, `192.0.2.7`, `[2001:db8::1]`; `None` for anything else (a
    /// host name).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u8>().ok()?)),
            None => (text, None),
        };
        let addr = addr.trim_start_matches('[').trim_end_matches(']');
        let addr = canonical(addr.parse::<IpAddr>().ok()?);
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        (prefix <= max).then_some(Self { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// True for any address a request must not reach while private networks are blocked.
pub fn is_forbidden_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => ipv4_reason(v4).is_some(),
        IpAddr::V6(v6) => ipv6_reason(v6).is_some(),
    }
}

fn ipv4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address (cloud metadata lives here)")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if a == 198 && (b == 18 || b == 19) {
        Some("a benchmarking address")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("a multicast, broadcast or reserved address")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("an IETF protocol address")
    } else {
        None
    }
}

fn ipv6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_ipv4(ip) {
        return ipv4_reason(v4);
    }
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique local (private) address")
    } else if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 {
        Some("a link-local or site-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else {
        None
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`)
/// or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mapped = s[..5].iter().all(|&x| x == 0) && s[5] == 0xffff;
    let compatible = s[..6].iter().all(|&x| x == 0) && !(s[6] == 0 && s[7] <= 1);
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0);
    (mapped || compatible || nat64).then_some(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(text: &str) -> bool {
        is_forbidden_ip(text.parse().expect("an IP address"))
    }

    #[test]
    fn private_and_special_addresses_are_blocked() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(blocked(ip), "{ip} should be blocked");
        }
    }

    #[test]
    fn metadata_endpoints_are_known_by_name_and_address_in_every_spelling() {
        for host in [
            "metadata.google.internal",
            "METADATA.GOOGLE.INTERNAL.",
            "metadata",
            "metadata.",
            "metadata.goog",
            "instance-data",
            "instance-data.ec2.internal",
            "x.metadata.google.internal",
        ] {
            assert!(
                metadata_host_reason(&Host::Domain(host)).is_some(),
                "{host}"
            );
        }
        for ip in [
            "169.254.169.254",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "fd00:ec2::254",
            "100.100.100.200",
            "168.63.129.16",
            "169.254.170.2",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(metadata_ip_reason(ip).is_some(), "{ip}");
        }
        for host in ["metadata.example.com", "mymetadata", "google.internal"] {
            assert!(
                metadata_host_reason(&Host::Domain(host)).is_none(),
                "{host}"
            );
        }
    }

    #[test]
    fn networks_contain_their_addresses_in_every_form() {
        let net = Network::parse("10.0.0.0/8").expect("cidr");
        assert!(net.contains("10.200.1.1".parse().expect("ip")));
        assert!(net.contains("::ffff:10.0.0.1".parse().expect("ip")));
        assert!(!net.contains("11.0.0.1".parse().expect("ip")));
        let one = Network::parse("[2001:db8::1]").expect("ip");
        assert!(one.contains("2001:db8::1".parse().expect("ip")));
        assert!(!one.contains("2001:db8::2".parse().expect("ip")));
        assert!(
            Network::parse("0.0.0.0/0")
                .expect("all")
                .contains("8.8.8.8".parse().expect("ip"))
        );
        for text in ["example.com", "10.0.0.0/33", "10.0.0.0/x", ""] {
            assert!(Network::parse(text).is_none(), "{text}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "8.8.8.8",
        ] {
            assert!(!blocked(ip), "{ip} should pass");
        }
    }
}
