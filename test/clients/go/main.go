// The client scenario of test/integration/go-java-clients.test.ts, driven by Go's
// github.com/rabbitmq/amqp091-go (Debian's golang-github-rabbitmq-amqp091-go-dev). It prints
// what a Go program sees, as one JSON object, for the test to compare with what the same
// scenario saw against RabbitMQ 3.10.8 (test/clients/expected.json).
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run test/clients/go/main.go amqp://guest:guest@127.0.0.1:5672/
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// dial connects to url; an amqps URL trusts the CA certificate in the file $CLIENT_CA.
func dial(url string) (*amqp.Connection, error) {
	if !strings.HasPrefix(url, "amqps:") {
		return amqp.Dial(url)
	}
	pem, err := os.ReadFile(os.Getenv("CLIENT_CA"))
	must(err)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	return amqp.DialTLS(url, &tls.Config{RootCAs: roots})
}

func main() {
	if len(os.Args) > 2 && os.Args[2] == "blocked" {
		blocked(os.Args[1])
		return
	}
	out := map[string]interface{}{}
	conn, err := dial(os.Args[1])
	must(err)
	out["product"] = conn.Properties["product"]
	out["version"] = conn.Properties["version"]
	capabilities := []string{}
	if caps, ok := conn.Properties["capabilities"].(amqp.Table); ok {
		for k, v := range caps {
			if v == true {
				capabilities = append(capabilities, k)
			}
		}
	}
	sort.Strings(capabilities)
	out["capabilities"] = capabilities

	ch, err := conn.Channel()
	must(err)
	must(ch.ExchangeDeclare("clients.x", "direct", true, false, false, false, nil))
	q, err := ch.QueueDeclare("clients.q", true, false, false, false, nil)
	must(err)
	out["declare"] = map[string]interface{}{"queue": q.Name, "messages": q.Messages, "consumers": q.Consumers}
	must(ch.QueueBind("clients.q", "k", "clients.x", false, nil))

	must(ch.Confirm(false))
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 3))
	for i := 0; i < 3; i++ {
		must(ch.Publish("clients.x", "k", false, false, amqp.Publishing{
			ContentType: "text/plain", DeliveryMode: amqp.Persistent, Headers: amqp.Table{"n": int32(i)}, Body: []byte(fmt.Sprintf("m%d", i)),
		}))
	}
	acked := 0
	for i := 0; i < 3; i++ {
		if c := <-confirms; c.Ack {
			acked++
		}
	}
	out["confirmed"] = acked

	d, ok, err := ch.Get("clients.q", false)
	must(err)
	out["get"] = map[string]interface{}{
		"ok": ok, "body": string(d.Body), "redelivered": d.Redelivered, "remaining": d.MessageCount, "contentType": d.ContentType,
		"exchange": d.Exchange, "routingKey": d.RoutingKey, "deliveryMode": d.DeliveryMode, "n": d.Headers["n"],
	}
	must(d.Nack(false, true))

	must(ch.Qos(2, 0, false))
	deliveries, err := ch.Consume("clients.q", "go-consumer", false, false, false, false, nil)
	must(err)
	consumed := []string{}
	for len(consumed) < 3 {
		select {
		case m := <-deliveries:
			s := string(m.Body)
			if m.Redelivered {
				s += " redelivered"
			}
			consumed = append(consumed, s)
			must(m.Ack(false))
		case <-time.After(5 * time.Second):
			fmt.Fprintln(os.Stderr, "timed out consuming")
			os.Exit(1)
		}
	}
	out["consumed"] = consumed
	must(ch.Cancel("go-consumer", false))

	named, err := ch.QueueDeclare("", false, true, true, false, nil)
	must(err)
	out["serverNamed"] = map[string]interface{}{"prefix": strings.HasPrefix(named.Name, "amq.gen-"), "length": len(named.Name)}

	_, err = ch.QueueDeclarePassive("clients.missing", false, false, false, false, nil)
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) {
		out["passive"] = map[string]interface{}{"code": amqpErr.Code, "reason": amqpErr.Reason, "server": amqpErr.Server}
	} else {
		out["passive"] = fmt.Sprint(err)
	}

	out["negotiated"] = map[string]interface{}{"heartbeat": conn.Config.Heartbeat.Seconds(), "frameMax": conn.Config.FrameSize, "channelMax": conn.Config.ChannelMax}

	// x-overflow reject-publish: the publish over x-max-length is nacked.
	full, err := conn.Channel()
	must(err)
	_, err = full.QueueDeclare("clients.full", false, false, false, false, amqp.Table{"x-max-length": int32(1), "x-overflow": "reject-publish"})
	must(err)
	must(full.Confirm(false))
	fullConfirms := full.NotifyPublish(make(chan amqp.Confirmation, 2))
	for _, body := range []string{"kept", "refused"} {
		must(full.Publish("", "clients.full", false, false, amqp.Publishing{Body: []byte(body)}))
	}
	outcomes := []bool{}
	for i := 0; i < 2; i++ {
		outcomes = append(outcomes, (<-fullConfirms).Ack)
	}
	out["rejectPublish"] = outcomes
	_, err = full.QueueDelete("clients.full", false, false, false)
	must(err)

	// A transaction: a rollback drops the publish, a commit applies it.
	tx, err := conn.Channel()
	must(err)
	_, err = tx.QueueDeclare("clients.tx", false, false, false, false, nil)
	must(err)
	must(tx.Tx())
	must(tx.Publish("", "clients.tx", false, false, amqp.Publishing{Body: []byte("rolled back")}))
	must(tx.TxRollback())
	must(tx.Publish("", "clients.tx", false, false, amqp.Publishing{Body: []byte("committed")}))
	must(tx.TxCommit())
	txq, err := tx.QueueDeclarePassive("clients.tx", false, false, false, false, nil)
	must(err)
	out["transaction"] = txq.Messages
	_, err = tx.QueueDelete("clients.tx", false, false, false)
	must(err)

	// An exclusive consumer keeps others out (403 on the second channel).
	excl, err := conn.Channel()
	must(err)
	_, err = excl.QueueDeclare("clients.excl", false, false, false, false, nil)
	must(err)
	_, err = excl.Consume("clients.excl", "first", false, true, false, false, nil)
	must(err)
	other, err := conn.Channel()
	must(err)
	_, err = other.Consume("clients.excl", "second", false, false, false, false, nil)
	if errors.As(err, &amqpErr) {
		out["exclusive"] = map[string]interface{}{"code": amqpErr.Code, "reason": amqpErr.Reason}
	} else {
		out["exclusive"] = fmt.Sprint(err)
	}
	_, err = excl.QueueDelete("clients.excl", false, false, false)
	must(err)

	ch2, err := conn.Channel()
	must(err)
	// A mandatory publish that routes nowhere comes back with basic.return.
	returns := ch2.NotifyReturn(make(chan amqp.Return, 1))
	must(ch2.Publish("clients.x", "nowhere", true, false, amqp.Publishing{Body: []byte("lost")}))
	select {
	case r := <-returns:
		out["returned"] = map[string]interface{}{"code": r.ReplyCode, "text": r.ReplyText, "routingKey": r.RoutingKey, "body": string(r.Body)}
	case <-time.After(5 * time.Second):
		out["returned"] = "nothing"
	}
	// A body larger than a frame goes in several and comes back whole.
	large := make([]byte, 300000)
	for i := range large {
		large[i] = byte('a' + i%26)
	}
	must(ch2.Publish("clients.x", "k", false, false, amqp.Publishing{Body: large}))
	var got amqp.Delivery
	for tries := 0; tries < 100; tries++ {
		if got, ok, err = ch2.Get("clients.q", true); err != nil || ok {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	must(err)
	out["large"] = map[string]interface{}{"length": len(got.Body), "same": string(got.Body) == string(large)}
	// A consumer of a queue that is deleted is told (consumer_cancel_notify).
	cancels := ch2.NotifyCancel(make(chan string, 1))
	_, err = ch2.Consume("clients.q", "go-watcher", false, false, false, false, nil)
	must(err)
	ch3, err := conn.Channel()
	must(err)
	deleted, err := ch3.QueueDelete("clients.q", false, false, false)
	must(err)
	select {
	case tag := <-cancels:
		out["cancelled"] = tag
	case <-time.After(5 * time.Second):
		out["cancelled"] = "nothing"
	}
	out["deletedMessages"] = deleted
	must(ch3.ExchangeDelete("clients.x", false, false))
	must(conn.Close())
	must(json.NewEncoder(os.Stdout).Encode(out))
}

// blocked: prints "ready", then publishes every 100 ms (a connection that only consumes is not
// blocked) until the broker says connection.blocked; prints "blocked" and waits for
// connection.unblocked (the test clears the alarm then), and prints what it saw.
func blocked(url string) {
	conn, err := dial(url)
	must(err)
	notes := conn.NotifyBlocked(make(chan amqp.Blocking, 2))
	ch, err := conn.Channel()
	must(err)
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	must(err)
	fmt.Println("ready")
	seen := []interface{}{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for len(seen) < 2 {
		select {
		case b := <-notes:
			seen = append(seen, map[string]interface{}{"active": b.Active, "reason": b.Reason})
			if b.Active {
				fmt.Println("blocked")
			}
		case <-tick.C:
			if len(seen) == 0 {
				must(ch.Publish("", q.Name, false, false, amqp.Publishing{Body: []byte("x")}))
			}
		case <-deadline:
			fmt.Fprintln(os.Stderr, "timed out waiting for connection.blocked and connection.unblocked")
			os.Exit(1)
		}
	}
	must(conn.Close())
	must(json.NewEncoder(os.Stdout).Encode(map[string]interface{}{"notifications": seen}))
}
