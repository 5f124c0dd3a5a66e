// The client scenario of test/integration/go-java-clients.test.ts, driven by the RabbitMQ Java
// client (Debian's librabbitmq-client-java). It prints what a Java program sees, as one JSON
// object, for the test to compare with what the same scenario saw against RabbitMQ 3.10.8
// (test/clients/expected.json).
//
//   javac -cp /usr/share/java/amqp-client.jar -d OUT ClientCheck.java
//   java -cp OUT:/usr/share/java/amqp-client.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar ClientCheck URL

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

public class ClientCheck {
  public static void main(String[] args) throws Exception {
    if (args.length > 1 && args[1].equals("recovery")) {
      recovery(args[0]);
      return;
    }
    if (args.length > 1 && args[1].equals("blocked")) {
      blocked(args[0]);
      return;
    }
    Map<String, Object> out = new TreeMap<>();
    Connection conn = factory(args[0]).newConnection();
    Map<String, Object> props = conn.getServerProperties();
    out.put("product", String.valueOf(props.get("product")));
    out.put("version", String.valueOf(props.get("version")));
    TreeSet<String> capabilities = new TreeSet<>();
    @SuppressWarnings("unchecked")
    Map<String, Object> caps = (Map<String, Object>) props.get("capabilities");
    for (Map.Entry<String, Object> e : caps.entrySet()) if (Boolean.TRUE.equals(e.getValue())) capabilities.add(e.getKey());
    out.put("capabilities", new ArrayList<>(capabilities));

    Channel ch = conn.createChannel();
    ch.exchangeDeclare("clients.x", "direct", true);
    AMQP.Queue.DeclareOk q = ch.queueDeclare("clients.q", true, false, false, null);
    Map<String, Object> declare = new TreeMap<>();
    declare.put("queue", q.getQueue());
    declare.put("messages", q.getMessageCount());
    declare.put("consumers", q.getConsumerCount());
    out.put("declare", declare);
    ch.queueBind("clients.q", "clients.x", "k");

    ch.confirmSelect();
    for (int i = 0; i < 3; i++) {
      Map<String, Object> headers = new HashMap<>();
      headers.put("n", i);
      AMQP.BasicProperties p = new AMQP.BasicProperties.Builder().contentType("text/plain").deliveryMode(2).headers(headers).build();
      ch.basicPublish("clients.x", "k", p, ("m" + i).getBytes(StandardCharsets.UTF_8));
    }
    out.put("confirmed", ch.waitForConfirms(5000) ? 3 : 0);

    GetResponse r = ch.basicGet("clients.q", false);
    Map<String, Object> get = new TreeMap<>();
    get.put("ok", r != null);
    get.put("body", new String(r.getBody(), StandardCharsets.UTF_8));
    get.put("redelivered", r.getEnvelope().isRedeliver());
    get.put("remaining", r.getMessageCount());
    get.put("contentType", r.getProps().getContentType());
    get.put("exchange", r.getEnvelope().getExchange());
    get.put("routingKey", r.getEnvelope().getRoutingKey());
    get.put("deliveryMode", r.getProps().getDeliveryMode());
    get.put("n", r.getProps().getHeaders().get("n"));
    out.put("get", get);
    ch.basicNack(r.getEnvelope().getDeliveryTag(), false, true);

    ch.basicQos(2);
    LinkedBlockingQueue<String> deliveries = new LinkedBlockingQueue<>();
    ch.basicConsume("clients.q", false, "java-consumer", new DefaultConsumer(ch) {
      @Override
      public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) throws IOException {
        deliveries.add(new String(body, StandardCharsets.UTF_8) + (envelope.isRedeliver() ? " redelivered" : ""));
        getChannel().basicAck(envelope.getDeliveryTag(), false);
      }
    });
    List<String> consumed = new ArrayList<>();
    while (consumed.size() < 3) {
      String d = deliveries.poll(5, TimeUnit.SECONDS);
      if (d == null) throw new IllegalStateException("timed out consuming");
      consumed.add(d);
    }
    out.put("consumed", consumed);
    ch.basicCancel("java-consumer");

    String named = ch.queueDeclare().getQueue();
    Map<String, Object> serverNamed = new TreeMap<>();
    serverNamed.put("prefix", named.startsWith("amq.gen-"));
    serverNamed.put("length", named.length());
    out.put("serverNamed", serverNamed);

    try {
      ch.queueDeclarePassive("clients.missing");
      out.put("passive", "declared");
    } catch (IOException e) {
      ShutdownSignalException s = (ShutdownSignalException) e.getCause();
      AMQP.Channel.Close close = (AMQP.Channel.Close) s.getReason();
      Map<String, Object> passive = new TreeMap<>();
      passive.put("code", close.getReplyCode());
      passive.put("reason", close.getReplyText());
      passive.put("server", !s.isInitiatedByApplication());
      out.put("passive", passive);
    }

    Map<String, Object> negotiated = new TreeMap<>();
    negotiated.put("heartbeat", conn.getHeartbeat());
    negotiated.put("frameMax", conn.getFrameMax());
    negotiated.put("channelMax", conn.getChannelMax());
    out.put("negotiated", negotiated);

    // x-overflow reject-publish: the publish over x-max-length is nacked.
    Channel full = conn.createChannel();
    Map<String, Object> limits = new HashMap<>();
    limits.put("x-max-length", 1);
    limits.put("x-overflow", "reject-publish");
    full.queueDeclare("clients.full", false, false, false, limits);
    full.confirmSelect();
    LinkedBlockingQueue<Boolean> outcomes = new LinkedBlockingQueue<>();
    full.addConfirmListener(new com.rabbitmq.client.ConfirmListener() {
      public void handleAck(long tag, boolean multiple) {
        outcomes.add(true);
      }

      public void handleNack(long tag, boolean multiple) {
        outcomes.add(false);
      }
    });
    full.basicPublish("", "clients.full", null, "kept".getBytes(StandardCharsets.UTF_8));
    full.basicPublish("", "clients.full", null, "refused".getBytes(StandardCharsets.UTF_8));
    List<Object> rejectPublish = new ArrayList<>();
    for (int i = 0; i < 2; i++) rejectPublish.add(outcomes.poll(5, TimeUnit.SECONDS));
    out.put("rejectPublish", rejectPublish);
    full.queueDelete("clients.full");

    // A transaction: a rollback drops the publish, a commit applies it.
    Channel tx = conn.createChannel();
    tx.queueDeclare("clients.tx", false, false, false, null);
    tx.txSelect();
    tx.basicPublish("", "clients.tx", null, "rolled back".getBytes(StandardCharsets.UTF_8));
    tx.txRollback();
    tx.basicPublish("", "clients.tx", null, "committed".getBytes(StandardCharsets.UTF_8));
    tx.txCommit();
    out.put("transaction", tx.queueDeclarePassive("clients.tx").getMessageCount());
    tx.queueDelete("clients.tx");

    // An exclusive consumer keeps others out (403 on the second channel).
    Channel excl = conn.createChannel();
    excl.queueDeclare("clients.excl", false, false, false, null);
    excl.basicConsume("clients.excl", false, "first", false, true, null, new DefaultConsumer(excl));
    Channel other = conn.createChannel();
    try {
      other.basicConsume("clients.excl", false, "second", new DefaultConsumer(other));
      out.put("exclusive", "consumed");
    } catch (IOException e) {
      AMQP.Channel.Close close = (AMQP.Channel.Close) ((ShutdownSignalException) e.getCause()).getReason();
      Map<String, Object> exclusive = new TreeMap<>();
      exclusive.put("code", close.getReplyCode());
      exclusive.put("reason", close.getReplyText());
      out.put("exclusive", exclusive);
    }
    excl.queueDelete("clients.excl");

    Channel ch2 = conn.createChannel();
    // A mandatory publish that routes nowhere comes back with basic.return.
    LinkedBlockingQueue<Map<String, Object>> returns = new LinkedBlockingQueue<>();
    ch2.addReturnListener((code, text, exchange, routingKey, properties, body) -> {
      Map<String, Object> ret = new TreeMap<>();
      ret.put("code", code);
      ret.put("text", text);
      ret.put("routingKey", routingKey);
      ret.put("body", new String(body, StandardCharsets.UTF_8));
      returns.add(ret);
    });
    ch2.basicPublish("clients.x", "nowhere", true, null, "lost".getBytes(StandardCharsets.UTF_8));
    Map<String, Object> returned = returns.poll(5, TimeUnit.SECONDS);
    out.put("returned", returned == null ? "nothing" : returned);
    // A body larger than a frame goes in several and comes back whole.
    byte[] large = new byte[300000];
    for (int i = 0; i < large.length; i++) large[i] = (byte) ('a' + i % 26);
    ch2.basicPublish("clients.x", "k", null, large);
    GetResponse big = null;
    for (int tries = 0; tries < 100 && big == null; tries++) {
      big = ch2.basicGet("clients.q", true);
      if (big == null) Thread.sleep(20);
    }
    Map<String, Object> largeOut = new TreeMap<>();
    largeOut.put("length", big.getBody().length);
    largeOut.put("same", java.util.Arrays.equals(big.getBody(), large));
    out.put("large", largeOut);
    // A consumer of a queue that is deleted is told (consumer_cancel_notify).
    LinkedBlockingQueue<String> cancels = new LinkedBlockingQueue<>();
    ch2.basicConsume("clients.q", false, "java-watcher", new DefaultConsumer(ch2) {
      @Override
      public void handleCancel(String tag) {
        cancels.add(tag);
      }
    });
    Channel ch3 = conn.createChannel();
    int deleted = ch3.queueDelete("clients.q").getMessageCount();
    String cancelled = cancels.poll(5, TimeUnit.SECONDS);
    out.put("cancelled", cancelled == null ? "nothing" : cancelled);
    out.put("deletedMessages", deleted);
    ch3.exchangeDelete("clients.x");
    conn.close();
    System.out.println(json(out));
  }

  /** A factory for uri; an amqps URI trusts the CA certificate in the PEM file $CLIENT_CA (5.0.0 has no hostname verification). */
  static ConnectionFactory factory(String uri) throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(uri);
    if (uri.startsWith("amqps:")) {
      java.security.KeyStore trusted = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
      trusted.load(null, null);
      try (java.io.InputStream in = new java.io.FileInputStream(System.getenv("CLIENT_CA"))) {
        trusted.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
      }
      javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trusted);
      javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      factory.useSslProtocol(context);
    }
    return factory;
  }

  /**
   * Automatic recovery, on by default in the Java client: prints "ready" once it consumes from a
   * server-named exclusive queue bound to amq.fanout, waits for the test to close its connection
   * from the server (320 CONNECTION_FORCED), then, once recovered (reconnected, the queue
   * declared again and bound, the consumer back), publishes through amq.fanout and prints what
   * it saw.
   */
  static void recovery(String uri) throws Exception {
    ConnectionFactory factory = factory(uri);
    factory.setNetworkRecoveryInterval(200);
    Connection conn = factory.newConnection("java-recovery");
    LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
    conn.addShutdownListener((cause) -> {
      AMQP.Connection.Close close = (AMQP.Connection.Close) cause.getReason();
      events.add("closed " + close.getReplyCode() + " " + close.getReplyText());
    });
    ((com.rabbitmq.client.Recoverable) conn).addRecoveryListener(new com.rabbitmq.client.RecoveryListener() {
      public void handleRecovery(com.rabbitmq.client.Recoverable r) {
        events.add("recovered");
      }

      public void handleRecoveryStarted(com.rabbitmq.client.Recoverable r) {}
    });
    Channel ch = conn.createChannel();
    String queue = ch.queueDeclare().getQueue();
    ch.queueBind(queue, "amq.fanout", "");
    LinkedBlockingQueue<String> deliveries = new LinkedBlockingQueue<>();
    ch.basicConsume(queue, true, new DefaultConsumer(ch) {
      @Override
      public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
        deliveries.add(new String(body, StandardCharsets.UTF_8));
      }
    });
    ch.basicPublish("amq.fanout", "", null, "before".getBytes(StandardCharsets.UTF_8));
    Map<String, Object> out = new TreeMap<>();
    out.put("before", deliveries.poll(5, TimeUnit.SECONDS));
    System.out.println("ready");
    System.out.flush();
    List<String> seen = new ArrayList<>();
    for (String e = events.poll(20, TimeUnit.SECONDS); e != null; e = events.poll(20, TimeUnit.SECONDS)) {
      seen.add(e);
      if (e.equals("recovered")) break;
    }
    out.put("events", seen);
    ch.basicPublish("amq.fanout", "", null, "after".getBytes(StandardCharsets.UTF_8));
    out.put("after", deliveries.poll(5, TimeUnit.SECONDS));
    conn.close();
    System.out.println(json(out));
  }

  /**
   * Prints "ready", then publishes every 100 ms (a connection that only consumes is not blocked)
   * until the broker says connection.blocked; prints "blocked" and waits for
   * connection.unblocked (the test clears the alarm then), and prints what it saw.
   */
  static void blocked(String uri) throws Exception {
    Connection conn = factory(uri).newConnection();
    LinkedBlockingQueue<Map<String, Object>> notes = new LinkedBlockingQueue<>();
    conn.addBlockedListener(new com.rabbitmq.client.BlockedListener() {
      public void handleBlocked(String reason) {
        Map<String, Object> n = new TreeMap<>();
        n.put("active", true);
        n.put("reason", reason);
        notes.add(n);
      }

      public void handleUnblocked() {
        Map<String, Object> n = new TreeMap<>();
        n.put("active", false);
        n.put("reason", "");
        notes.add(n);
      }
    });
    Channel ch = conn.createChannel();
    String queue = ch.queueDeclare().getQueue();
    System.out.println("ready");
    System.out.flush();
    List<Object> seen = new ArrayList<>();
    long deadline = System.currentTimeMillis() + 60000;
    while (seen.size() < 2) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out waiting for connection.blocked and connection.unblocked");
      Map<String, Object> n = notes.poll(100, TimeUnit.MILLISECONDS);
      if (n != null) {
        seen.add(n);
        if (Boolean.TRUE.equals(n.get("active"))) {
          System.out.println("blocked");
          System.out.flush();
        }
      } else if (seen.isEmpty()) {
        ch.basicPublish("", queue, null, "x".getBytes(StandardCharsets.UTF_8));
      }
    }
    conn.close();
    Map<String, Object> out = new TreeMap<>();
    out.put("notifications", seen);
    System.out.println(json(out));
  }

  /** The JSON of maps, lists, strings, numbers and booleans (keys in the map's order). */
  static String json(Object v) {
    if (v == null) return "null";
    if (v instanceof Map) {
      StringBuilder b = new StringBuilder("{");
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (b.length() > 1) b.append(',');
        b.append(json(String.valueOf(e.getKey()))).append(':').append(json(e.getValue()));
      }
      return b.append('}').toString();
    }
    if (v instanceof List) {
      StringBuilder b = new StringBuilder("[");
      for (Object x : (List<?>) v) {
        if (b.length() > 1) b.append(',');
        b.append(json(x));
      }
      return b.append(']').toString();
    }
    if (v instanceof Number || v instanceof Boolean) return String.valueOf(v);
    StringBuilder b = new StringBuilder("\"");
    for (char c : String.valueOf(v).toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
}
