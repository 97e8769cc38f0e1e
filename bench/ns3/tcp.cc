// Lean ns-3 counterpart of txop's criterion group `tcp_1down_ht20_mcs7_linux616`
// (crates/txop-sim/benches/saturated.rs): n 802.11n stations at HT20 MCS 7, long guard
// interval, fixed rate (ConstantRateWifiManager) in the 5 GHz band, A-MPDU aggregation
// for best effort, no channel errors; a server behind the AP on a 1 Gbit/s, 1 ms wired
// link (txop's default wired link, 1000 packets of queue); one TCP CUBIC bulk download
// from the server to every station and a ping (56-byte ICMP echo every 200 ms, 84 bytes
// of IP) from every station to the server, for ten simulated seconds from the first
// segment on (handshake and slow start included), as flent's tcp_1down on every station.
//
// TCP as txop's defaults (Linux): CUBIC with HyStart, MSS 1448 with timestamps (1500-byte
// IP packets), initial window 10, SACK, delayed ACKs every second segment or after
// 40 ms, minimum RTO 200 ms, 16 MiB receive window, no pacing, no ECN. txop caps an
// A-MPDU at 4 ms on the air; ns-3 caps it in bytes, so the best-effort A-MPDU limit is
// set to the PSDU that fits in 4 ms at HT20 MCS 7, long GI (32,204 bytes: 20 full-size
// MPDUs).
//
// Nothing but the simulation and a throughput counter (the packet sinks' byte counts):
// no pcap, no ASCII traces, no trace files, no log component enabled, no FlowMonitor.
// Every queue is ns-3's bounded default (WifiMacQueue 500 packets per access category,
// the fq_codel queue disc Ipv4AddressHelper installs) and the wired link's 1000 packets.
//
// txop's stations are associated from t = 0, its block-ack sessions exist from the
// start and its AP sends no beacons. Here the AP sends no beacons either; a warm-up
// before the traffic lets the stations associate (active probing) and then opens every
// block-ack session in a quiet slot of its own (see Run::SetUpBlockAck for why). The
// applications are installed when the warm-up ends and the simulation stops ten
// simulated seconds later. `wall_s` covers what txop's benchmark iteration covers:
// building the simulation, the ten seconds of traffic, Simulator::Destroy; the warm-up
// (`warmup_wall_s`) and the process start are left out.
//
// Other differences from txop's scenario: txop's AP and stations run the linux-6.16
// stack model (mac80211's fq_codel TXQs with CoDel at 20/100 ms, AQL, a firmware queue
// of 1424 packets, at most 64 subframes per A-MPDU); ns-3 has its own queueing (above).
// The TCP implementations differ (ns-3's TcpCubic against txop's model of Linux), and
// ns-3 resolves addresses with ARP.
//
// Steady state (--traffic-warmup=W, issue 31): the traffic runs W + seconds simulated
// seconds and only the last `seconds` are timed: `wall_s` then runs from the moment the
// simulation reaches W seconds of traffic to Simulator::Run's return (building the
// simulation, the warm-ups and Simulator::Destroy left out), and `throughput_mbps` is
// the goodput over those seconds alone. txop's steady-state runs
// (crates/txop-sim/benches/saturated.rs, `--one … --warmup-s`) time the same window.
//
// Usage: tcp --n=1 [--seconds=10] [--traffic-warmup=0] [--seed=1]
// Prints one line: `ns3 group=tcp_1down_ht20_mcs7_linux616 n=1 sim_s=10 warmup_s=0
// wall_s=… warmup_wall_s=… total_wall_s=… throughput_mbps=…` (TCP goodput, all
// stations).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-apps-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cstdio>

using namespace ns3;

namespace
{

using Clock = std::chrono::steady_clock;

constexpr uint32_t MSS_BYTES = 1448;
constexpr uint16_t FIRST_PORT = 5000;
/// PSDU bytes of an A-MPDU lasting 4 ms at HT20 MCS 7, long GI: (4000 − 36 µs of
/// HT-mixed preamble) / 4 µs = 991 symbols of 260 bits, less 22 service and tail bits.
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

struct Run
{
    uint32_t stations{1};
    double seconds{10.0};
    /// Simulated seconds of traffic before the timed window (0: time from the start).
    double trafficWarmup{0.0};
    uint32_t associated{0};
    bool started{false};
    Clock::time_point trafficStart{};
    /// When the timed window of a steady-state run began, and the bytes received by then.
    Clock::time_point steadyStart{};
    uint64_t steadyStartBytes{0};
    Ptr<Node> server;
    Ipv4Address serverAddress;
    NodeContainer stas;
    Ptr<NetDevice> ap;
    NetDeviceContainer staDevs;
    std::vector<Ipv4Address> staAddresses;
    ApplicationContainer sinks;

    void Associated(Mac48Address)
    {
        if (++associated == stations)
        {
            Simulator::ScheduleNow(&Run::SetUpBlockAck, this);
        }
    }

    /// Opens the block-ack sessions (TID 0, both directions) one link and one direction
    /// at a time, each in a quiet slot of its own, from one slot after the last
    /// association (the AP drops frames to a station until it has the Ack of its
    /// Association Response): a few frames queued at once make ns-3 send an ADDBA
    /// Request. On a busy channel ns-3.37 can abort here ("Invalid WifiPhy
    /// state"): when the Ack of an ADDBA Response is lost, the originator already sends
    /// A-MPDUs while the recipient's agreement is still pending, and the recipient acks
    /// each MPDU on its own while it transmits. txop's sessions exist from the start.
    void SetUpBlockAck()
    {
        const Address apAddress = ap->GetAddress();
        for (uint32_t i = 0; i < stations; ++i)
        {
            Ptr<NetDevice> sta = staDevs.Get(i);
            Simulator::Schedule(MilliSeconds(BLOCK_ACK_SLOT_MS * (2 * i + 1)),
                                &QueueFrames,
                                ap,
                                sta->GetAddress());
            Simulator::Schedule(MilliSeconds(BLOCK_ACK_SLOT_MS * (2 * i + 2)),
                                &QueueFrames,
                                sta,
                                apAddress);
        }
        Simulator::Schedule(MilliSeconds(BLOCK_ACK_SLOT_MS * (2 * stations + 2)),
                            &Run::StartTraffic,
                            this);
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
        const Mac48Address apAddress = Mac48Address::ConvertFrom(ap->GetAddress());
        for (uint32_t i = 0; i < stations; ++i)
        {
            Ptr<NetDevice> sta = staDevs.Get(i);
            const Mac48Address staAddress = Mac48Address::ConvertFrom(sta->GetAddress());
            if (!be(ap)->GetBaAgreementEstablished(staAddress, 0) ||
                !be(sta)->GetBaAgreementEstablished(apAddress, 0))
            {
                return false;
            }
        }
        return true;
    }

    /// Installs the applications; they start at once (Node::AddApplication initialises
    /// them at the current time).
    /// Stops a run whose stations never all associated (main reports it).
    void StopIfIdle()
    {
        if (!started)
        {
            Simulator::Stop();
        }
    }

    void StartTraffic()
    {
        if (!BlockAckEverywhere())
        {
            std::fprintf(stderr, "tcp: a block-ack session failed to open in its quiet slot\n");
            std::exit(1);
        }
        trafficStart = Clock::now();
        started = true;
        for (uint32_t i = 0; i < stations; ++i)
        {
            const uint16_t port = FIRST_PORT + i;
            PacketSinkHelper sink("ns3::TcpSocketFactory",
                                  InetSocketAddress(Ipv4Address::GetAny(), port));
            sinks.Add(sink.Install(stas.Get(i)));
            BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(staAddresses[i], port));
            bulk.SetAttribute("MaxBytes", UintegerValue(0));
            bulk.SetAttribute("SendSize", UintegerValue(MSS_BYTES));
            bulk.Install(server);
            V4PingHelper ping(serverAddress);
            ping.SetAttribute("Interval", TimeValue(MilliSeconds(200)));
            ping.SetAttribute("Size", UintegerValue(56));
            ping.Install(stas.Get(i));
        }
        if (trafficWarmup > 0)
        {
            Simulator::Schedule(Seconds(trafficWarmup), &Run::MarkSteadyStart, this);
        }
        Simulator::Stop(Seconds(trafficWarmup + seconds));
    }

    /// Start of a steady-state run's timed window.
    void MarkSteadyStart()
    {
        steadyStartBytes = ReceivedBytes();
        steadyStart = Clock::now();
    }

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
    cmd.AddValue("n", "stations", run.stations);
    cmd.AddValue("seconds", "simulated seconds of traffic (timed)", run.seconds);
    cmd.AddValue("traffic-warmup",
                 "simulated seconds of traffic before the timed window",
                 run.trafficWarmup);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);
    if (run.stations == 0 || run.stations > 1000 || run.seconds <= 0 || run.trafficWarmup < 0)
    {
        std::fprintf(stderr,
                     "tcp: --n must be 1 to 1000, --seconds positive, --traffic-warmup >= 0\n");
        return 2;
    }

    const auto t0 = Clock::now();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    ConfigureTcp();

    NodeContainer serverAndAp;
    serverAndAp.Create(2);
    run.server = serverAndAp.Get(0);
    Ptr<Node> ap = serverAndAp.Get(1);
    run.stas.Create(run.stations);

    PointToPointHelper wire;
    wire.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    wire.SetChannelAttribute("Delay", StringValue("1ms"));
    wire.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));
    NetDeviceContainer wireDevs = wire.Install(serverAndAp);

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211n);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("HtMcs7"),
                                 "ControlMode",
                                 StringValue("OfdmRate24Mbps"));
    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    phy.Set("ChannelSettings", StringValue("{36, 20, BAND_5GHZ, 0}"));

    WifiMacHelper mac;
    Ssid ssid("bench");
    mac.SetType("ns3::ApWifiMac",
                "Ssid",
                SsidValue(ssid),
                "BeaconGeneration",
                BooleanValue(false),
                "BE_MaxAmpduSize",
                UintegerValue(MAX_AMPDU_BYTES));
    NetDeviceContainer apDev = wifi.Install(phy, mac, ap);
    mac.SetType("ns3::StaWifiMac",
                "Ssid",
                SsidValue(ssid),
                "ActiveProbing",
                BooleanValue(true),
                "MaxMissedBeacons",
                UintegerValue(std::numeric_limits<uint32_t>::max()),
                "BE_MaxAmpduSize",
                UintegerValue(MAX_AMPDU_BYTES));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, run.stas);
    run.ap = apDev.Get(0);
    run.staDevs = staDevs;
    wifi.AssignStreams(apDev, 0);
    wifi.AssignStreams(staDevs, 100);

    // The AP and every station within a metre of it: no channel errors.
    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    for (uint32_t i = 0; i < run.stations; ++i)
    {
        double a = 2 * M_PI * i / run.stations;
        pos->Add(Vector(std::cos(a), std::sin(a), 0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(ap);
    mobility.Install(run.stas);

    InternetStackHelper internet;
    internet.Install(serverAndAp);
    internet.Install(run.stas);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer wireIfs = addresses.Assign(wireDevs);
    run.serverAddress = wireIfs.GetAddress(0);
    addresses.SetBase("10.1.0.0", "255.255.0.0");
    addresses.Assign(apDev);
    Ipv4InterfaceContainer staIfs = addresses.Assign(staDevs);
    for (uint32_t i = 0; i < run.stations; ++i)
    {
        run.staAddresses.push_back(staIfs.GetAddress(i));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    for (uint32_t i = 0; i < run.stations; ++i)
    {
        staDevs.Get(i)->GetObject<WifiNetDevice>()->GetMac()->TraceConnectWithoutContext(
            "Assoc",
            MakeCallback(&Run::Associated, &run));
    }

    // Guard: association is over long before this (it takes milliseconds).
    Simulator::Schedule(Seconds(5), &Run::StopIfIdle, &run);
    const auto runStart = Clock::now();
    Simulator::Run();
    if (!run.started)
    {
        std::fprintf(stderr,
                     "tcp: only %u of %u stations associated within 5 simulated seconds\n",
                     run.associated,
                     run.stations);
        return 1;
    }
    const auto runEnd = Clock::now();
    const uint64_t bytes = run.ReceivedBytes();
    Simulator::Destroy();
    const auto t1 = Clock::now();

    const bool steady = run.trafficWarmup > 0;
    const double warmup = SecondsBetween(runStart, steady ? run.steadyStart : run.trafficStart);
    const double wall = steady ? SecondsBetween(run.steadyStart, runEnd)
                               : SecondsBetween(t0, runStart) + SecondsBetween(run.trafficStart, t1);
    const uint64_t timedBytes = bytes - (steady ? run.steadyStartBytes : 0);
    std::printf("ns3 group=tcp_1down_ht20_mcs7_linux616 n=%u sim_s=%g warmup_s=%g wall_s=%.6f "
                "warmup_wall_s=%.6f total_wall_s=%.6f throughput_mbps=%.3f\n",
                run.stations,
                run.seconds,
                run.trafficWarmup,
                wall,
                warmup,
                SecondsBetween(t0, t1),
                timedBytes * 8.0 / run.seconds / 1e6);
    return 0;
}
