// Lean ns-3 counterpart of txop's benchmark `bss4_tcp_1down_ht20_mcs7_linux616` (issue 15's speed
// check: four BSSs × 16 stations with TCP, txop at least 50× faster than ns-3 3.37 on
// the same topology). Same style and conventions as tcp.cc, which this follows except
// where said.
//
// Topology (what txop's benchmark and its scenario `neighbours-bss4` match):
// - Four BSSs on one 20 MHz channel in the 5 GHz band (channel 36, 5180 MHz), 802.11n
//   HT20 MCS 7, long guard interval, one spatial stream, fixed rate
//   (ConstantRateWifiManager; ACK and BlockAck at the control-response rate, 24 Mbit/s
//   OFDM), EDCA defaults (best effort: AIFSN 3, CW 15–1023, no TXOP limit), A-MPDU for
//   best effort capped at 4 ms on the air (32,204 bytes, as tcp.cc), no RTS/CTS, no
//   beacons.
// - APs at the corners of a 20 m square, in the plane z = 0: BSS 0 at (0, 0), BSS 1 at
//   (20, 0), BSS 2 at (0, 20), BSS 3 at (20, 20) (metres).
// - 16 stations per BSS on a circle of radius 5 m around their AP: station k (0–15) of
//   BSS b at AP_b + 5·(cos 2πk/16, sin 2πk/16). Each station belongs to its own AP's
//   BSS (SSIDs "bss0" … "bss3", association by active probing during the warm-up).
// - Propagation: log-distance, L(d) = L0 + 10·3.5·log10(d / 1 m) dB, L0 = Friis at 1 m
//   and 5.2 GHz = 20·log10(4π·5.2e9 / c) = 46.77 dB; no fading, no shadowing; speed-of-
//   light delay. Transmit power 20 dBm everywhere, no antenna gains. So: a station to
//   its AP (5 m) −51.2 dBm; AP to a neighbouring AP (20 m) −72.3 dBm, to the diagonal
//   one (28.3 m) −77.6 dBm; stations up to 38.3 m apart, −82.2 dBm: 10 of the 2016
//   station pairs, all in diagonal BSSs and more than 37.85 m apart, receive each other
//   under the −82 dBm preamble detection threshold (hidden from each other); every
//   other pair of nodes hears each other. ns-3's receiver: noise figure 7 dB (noise
//   floor −94 dBm in 20 MHz), RxSensitivity −101 dBm, preamble detection at RSSI
//   ≥ −82 dBm and SNR ≥ 4 dB (ThresholdPreambleDetectionModel, WifiPhyHelper's
//   default), CCA −82 dBm for a detected frame and −62 dBm energy detection, no frame
//   capture model (3.37's default), TableBasedErrorRateModel on the SINR, EIFS = SIFS +
//   44 µs + AIFS after an errored frame, response timeout SIFS + slot + 20 µs.
// - Traffic: one TCP CUBIC bulk download per station, from a server behind its own AP
//   (one server per BSS, each on a 1 Gbit/s, 1 ms wired link with a 1000-packet queue to
//   its AP), ten simulated seconds from the first segment on (handshake and slow start
//   included). No pings (tcp.cc adds one per station; this scenario does not). TCP as
//   tcp.cc (txop's Linux defaults): CUBIC with HyStart, MSS 1448 with timestamps, initial
//   window 10, SACK, delayed ACKs every second segment or after 40 ms, minimum RTO
//   200 ms, 16 MiB buffers, no pacing, no ECN.
//
// Warm-up, timing and the other differences from txop are tcp.cc's: the stations
// associate and every block-ack session (TID 0, both directions, 64 links) opens in a
// quiet 2 ms slot of its own before the traffic; `wall_s` covers building the
// simulation, the simulated traffic and Simulator::Destroy, not the warm-up
// (`warmup_wall_s`) or the process start. ns-3 keeps its own queues (WifiMacQueue 500
// packets per AC, fq_codel from the traffic-control layer), TCP and ARP. Routes are
// static (each server and station sends through its own AP).
//
// Usage: bss4 [--n=16] [--seconds=10] [--seed=1]
// Prints one line: `ns3 group=bss4_tcp_1down_ht20_mcs7_linux616 bsss=4 n=16 sim_s=10 wall_s=…
// warmup_wall_s=… total_wall_s=… throughput_mbps=… bss0_mbps=… bss1_mbps=… bss2_mbps=…
// bss3_mbps=…` (TCP goodput: all BSSs, then each; n is stations per BSS).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/propagation-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

using namespace ns3;

namespace
{

using Clock = std::chrono::steady_clock;

constexpr uint32_t BSSS = 4;
constexpr double SQUARE_SIDE_M = 20.0;
constexpr double RING_RADIUS_M = 5.0;
constexpr double PATH_LOSS_EXPONENT = 3.5;
constexpr double REFERENCE_FREQUENCY_HZ = 5.2e9;
constexpr double SPEED_OF_LIGHT_M_S = 299792458.0;
constexpr double TX_POWER_DBM = 20.0;
constexpr uint32_t MSS_BYTES = 1448;
constexpr uint16_t FIRST_PORT = 5000;
/// PSDU bytes of an A-MPDU lasting 4 ms at HT20 MCS 7, long GI (as tcp.cc).
constexpr uint32_t MAX_AMPDU_BYTES = (991 * 260 - 22) / 8;
/// The warm-up's frames (IEEE local experimental ethertype) and the quiet slot each link
/// and direction gets to open its block-ack session in.
constexpr uint16_t WARM_UP_PROTOCOL = 0x88B5;
constexpr int BLOCK_ACK_SLOT_MS = 2;

double
SecondsBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

/// Friis free-space loss at 1 m and REFERENCE_FREQUENCY_HZ (dB): 46.77 dB.
double
ReferenceLossDb()
{
    return 20.0 * std::log10(4.0 * M_PI * REFERENCE_FREQUENCY_HZ / SPEED_OF_LIGHT_M_S);
}

/// AP b's position: the corners of the square, row by row.
Vector
ApPosition(uint32_t b)
{
    return Vector(SQUARE_SIDE_M * (b % 2), SQUARE_SIDE_M * (b / 2), 0);
}

/// One BSS: its server, AP and stations.
struct Bss
{
    Ptr<Node> server;
    Ptr<Node> ap;
    NodeContainer stas;
    Ptr<NetDevice> apDev;
    NetDeviceContainer staDevs;
    std::vector<Ipv4Address> staAddresses;
    ApplicationContainer sinks;

    uint64_t ReceivedBytes() const
    {
        uint64_t bytes = 0;
        for (uint32_t i = 0; i < sinks.GetN(); ++i)
        {
            bytes += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
        }
        return bytes;
    }
};

struct Run
{
    uint32_t stationsPerBss{16};
    double seconds{10.0};
    uint32_t associated{0};
    bool started{false};
    Clock::time_point trafficStart{};
    std::vector<Bss> bsss;

    void Associated(Mac48Address)
    {
        if (++associated == stationsPerBss * BSSS)
        {
            Simulator::ScheduleNow(&Run::SetUpBlockAck, this);
        }
    }

    /// Opens the block-ack sessions (TID 0, both directions) one link and one direction
    /// at a time, each in a quiet slot of its own, from one slot after the last
    /// association (see tcp.cc's Run::SetUpBlockAck for why).
    void SetUpBlockAck()
    {
        int slot = 1;
        for (const Bss& bss : bsss)
        {
            const Address apAddress = bss.apDev->GetAddress();
            for (uint32_t i = 0; i < stationsPerBss; ++i)
            {
                Ptr<NetDevice> sta = bss.staDevs.Get(i);
                Simulator::Schedule(MilliSeconds(BLOCK_ACK_SLOT_MS * slot++),
                                    &QueueFrames,
                                    bss.apDev,
                                    sta->GetAddress());
                Simulator::Schedule(MilliSeconds(BLOCK_ACK_SLOT_MS * slot++),
                                    &QueueFrames,
                                    sta,
                                    apAddress);
            }
        }
        Simulator::Schedule(MilliSeconds(BLOCK_ACK_SLOT_MS * (slot + 1)), &Run::StartTraffic, this);
    }

    /// Four frames to `to` at once (an ethertype nobody listens to; they are dropped
    /// on arrival).
    static void QueueFrames(Ptr<NetDevice> from, Address to)
    {
        for (int k = 0; k < 4; ++k)
        {
            from->Send(Create<Packet>(100), to, WARM_UP_PROTOCOL);
        }
    }

    /// Whether every link has its TID 0 block-ack session, both ways.
    bool BlockAckEverywhere() const
    {
        auto be = [](Ptr<NetDevice> d) {
            return d->GetObject<WifiNetDevice>()->GetMac()->GetQosTxop(AC_BE);
        };
        for (const Bss& bss : bsss)
        {
            const Mac48Address apAddress = Mac48Address::ConvertFrom(bss.apDev->GetAddress());
            for (uint32_t i = 0; i < stationsPerBss; ++i)
            {
                Ptr<NetDevice> sta = bss.staDevs.Get(i);
                const Mac48Address staAddress = Mac48Address::ConvertFrom(sta->GetAddress());
                if (!be(bss.apDev)->GetBaAgreementEstablished(staAddress, 0) ||
                    !be(sta)->GetBaAgreementEstablished(apAddress, 0))
                {
                    return false;
                }
            }
        }
        return true;
    }

    /// Stops a run whose stations never all associated (main reports it).
    void StopIfIdle()
    {
        if (!started)
        {
            Simulator::Stop();
        }
    }

    /// Installs the applications; they start at once (Node::AddApplication initialises
    /// them at the current time).
    void StartTraffic()
    {
        if (!BlockAckEverywhere())
        {
            std::fprintf(stderr, "bss4: a block-ack session failed to open in its quiet slot\n");
            std::exit(1);
        }
        trafficStart = Clock::now();
        started = true;
        for (Bss& bss : bsss)
        {
            for (uint32_t i = 0; i < stationsPerBss; ++i)
            {
                const uint16_t port = FIRST_PORT + i;
                PacketSinkHelper sink("ns3::TcpSocketFactory",
                                      InetSocketAddress(Ipv4Address::GetAny(), port));
                bss.sinks.Add(sink.Install(bss.stas.Get(i)));
                BulkSendHelper bulk("ns3::TcpSocketFactory",
                                    InetSocketAddress(bss.staAddresses[i], port));
                bulk.SetAttribute("MaxBytes", UintegerValue(0));
                bulk.SetAttribute("SendSize", UintegerValue(MSS_BYTES));
                bulk.Install(bss.server);
            }
        }
        Simulator::Stop(Seconds(seconds));
    }
};

void
ConfigureTcp()
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(MSS_BYTES));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(16 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(16 << 20));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
}

} // namespace

int
main(int argc, char* argv[])
{
    Run run;
    uint32_t seed = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("n", "stations per BSS", run.stationsPerBss);
    cmd.AddValue("seconds", "simulated seconds of traffic", run.seconds);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);
    if (run.stationsPerBss == 0 || run.stationsPerBss > 250 || run.seconds <= 0)
    {
        std::fprintf(stderr, "bss4: --n must be 1 to 250 and --seconds positive\n");
        return 2;
    }

    const auto t0 = Clock::now();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    ConfigureTcp();

    Ptr<YansWifiChannel> channel = CreateObject<YansWifiChannel>();
    Ptr<LogDistancePropagationLossModel> loss = CreateObject<LogDistancePropagationLossModel>();
    loss->SetAttribute("Exponent", DoubleValue(PATH_LOSS_EXPONENT));
    loss->SetAttribute("ReferenceDistance", DoubleValue(1.0));
    loss->SetAttribute("ReferenceLoss", DoubleValue(ReferenceLossDb()));
    channel->SetPropagationLossModel(loss);
    channel->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211n);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("HtMcs7"),
                                 "ControlMode",
                                 StringValue("OfdmRate24Mbps"));
    YansWifiPhyHelper phy;
    phy.SetChannel(channel);
    phy.Set("ChannelSettings", StringValue("{36, 20, BAND_5GHZ, 0}"));
    phy.Set("TxPowerStart", DoubleValue(TX_POWER_DBM));
    phy.Set("TxPowerEnd", DoubleValue(TX_POWER_DBM));

    PointToPointHelper wire;
    wire.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    wire.SetChannelAttribute("Delay", StringValue("1ms"));
    wire.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));

    InternetStackHelper internet;
    Ipv4StaticRoutingHelper staticRouting;
    MobilityHelper mobility;
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    run.bsss.resize(BSSS);
    for (uint32_t b = 0; b < BSSS; ++b)
    {
        Bss& bss = run.bsss[b];
        NodeContainer serverAndAp;
        serverAndAp.Create(2);
        bss.server = serverAndAp.Get(0);
        bss.ap = serverAndAp.Get(1);
        bss.stas.Create(run.stationsPerBss);
        NetDeviceContainer wireDevs = wire.Install(serverAndAp);

        WifiMacHelper mac;
        Ssid ssid("bss" + std::to_string(b));
        mac.SetType("ns3::ApWifiMac",
                    "Ssid",
                    SsidValue(ssid),
                    "BeaconGeneration",
                    BooleanValue(false),
                    "BE_MaxAmpduSize",
                    UintegerValue(MAX_AMPDU_BYTES));
        NetDeviceContainer apDev = wifi.Install(phy, mac, bss.ap);
        mac.SetType("ns3::StaWifiMac",
                    "Ssid",
                    SsidValue(ssid),
                    "ActiveProbing",
                    BooleanValue(true),
                    "MaxMissedBeacons",
                    UintegerValue(std::numeric_limits<uint32_t>::max()),
                    "BE_MaxAmpduSize",
                    UintegerValue(MAX_AMPDU_BYTES));
        bss.staDevs = wifi.Install(phy, mac, bss.stas);
        bss.apDev = apDev.Get(0);
        wifi.AssignStreams(apDev, 1000 * b);
        wifi.AssignStreams(bss.staDevs, 1000 * b + 100);

        Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
        const Vector apPos = ApPosition(b);
        pos->Add(apPos);
        for (uint32_t k = 0; k < run.stationsPerBss; ++k)
        {
            const double a = 2 * M_PI * k / run.stationsPerBss;
            pos->Add(Vector(apPos.x + RING_RADIUS_M * std::cos(a),
                            apPos.y + RING_RADIUS_M * std::sin(a),
                            0));
        }
        mobility.SetPositionAllocator(pos);
        mobility.Install(bss.ap);
        mobility.Install(bss.stas);

        internet.Install(serverAndAp);
        internet.Install(bss.stas);
        Ipv4AddressHelper addresses;
        addresses.SetBase(Ipv4Address(("10.100." + std::to_string(b) + ".0").c_str()),
                          "255.255.255.0");
        Ipv4InterfaceContainer wireIfs = addresses.Assign(wireDevs);
        addresses.SetBase(Ipv4Address(("10." + std::to_string(b + 1) + ".0.0").c_str()),
                          "255.255.0.0");
        Ipv4InterfaceContainer apIf = addresses.Assign(apDev);
        Ipv4InterfaceContainer staIfs = addresses.Assign(bss.staDevs);
        // Static routes: the server and every station send everything through the AP.
        staticRouting.GetStaticRouting(bss.server->GetObject<Ipv4>())
            ->SetDefaultRoute(wireIfs.GetAddress(1), 1);
        for (uint32_t i = 0; i < run.stationsPerBss; ++i)
        {
            bss.staAddresses.push_back(staIfs.GetAddress(i));
            staticRouting.GetStaticRouting(bss.stas.Get(i)->GetObject<Ipv4>())
                ->SetDefaultRoute(apIf.GetAddress(0), 1);
            bss.staDevs.Get(i)->GetObject<WifiNetDevice>()->GetMac()->TraceConnectWithoutContext(
                "Assoc",
                MakeCallback(&Run::Associated, &run));
        }
    }

    // Guard: association is over long before this (it takes milliseconds).
    Simulator::Schedule(Seconds(5), &Run::StopIfIdle, &run);
    const auto runStart = Clock::now();
    Simulator::Run();
    if (!run.started)
    {
        std::fprintf(stderr,
                     "bss4: only %u of %u stations associated within 5 simulated seconds\n",
                     run.associated,
                     run.stationsPerBss * BSSS);
        return 1;
    }
    uint64_t bytes[BSSS];
    uint64_t total = 0;
    for (uint32_t b = 0; b < BSSS; ++b)
    {
        bytes[b] = run.bsss[b].ReceivedBytes();
        total += bytes[b];
    }
    run.bsss.clear();
    Simulator::Destroy();
    const auto t1 = Clock::now();

    auto mbps = [&](uint64_t b) { return b * 8.0 / run.seconds / 1e6; };
    const double warmup = SecondsBetween(runStart, run.trafficStart);
    const double wall = SecondsBetween(t0, runStart) + SecondsBetween(run.trafficStart, t1);
    std::printf("ns3 group=bss4_tcp_1down_ht20_mcs7_linux616 bsss=%u n=%u sim_s=%g wall_s=%.6f "
                "warmup_wall_s=%.6f total_wall_s=%.6f throughput_mbps=%.3f bss0_mbps=%.3f "
                "bss1_mbps=%.3f bss2_mbps=%.3f bss3_mbps=%.3f\n",
                BSSS,
                run.stationsPerBss,
                run.seconds,
                wall,
                warmup,
                SecondsBetween(t0, t1),
                mbps(total),
                mbps(bytes[0]),
                mbps(bytes[1]),
                mbps(bytes[2]),
                mbps(bytes[3]));
    return 0;
}
